import Foundation
import Lua
import LookoutTestSupport
import XCTest

/// Issue 14 §2: work the count hook never sees (C loops of the standard library, finalizers,
/// error handling and `<close>` handlers run by the host) stops at a limit, with an error that
/// names it. Each case is guarded by a test-level timeout: before the fix, each of them hung.
final class EscapeLimitsTests: XCTestCase {
    /// Runs `source` with a small CPU limit; fails the test instead of hanging when the run does
    /// not end within `guardSeconds` (then the state is left behind, stuck).
    private func run(
        _ source: String, cpuLimit: Double = 0.2, memoryLimit: Int = 16 << 20, guardSeconds: Double = 60,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws -> (Transcript, LuaRunOutcome) {
        let transcript = Transcript()
        let runtime = LuaRuntime(options: testOptions(transcript, name: "hostile.lua") {
            $0.cpuLimit = cpuLimit
            $0.memoryLimit = memoryLimit
        })
        try await runtime.start()
        let outcome = try await runGuarded(runtime, source, chunkName: "@hostile.lua", guardSeconds: guardSeconds,
                                           file: file, line: line)
        return (transcript, outcome)
    }

    private func assertStoppedByCPULimit(
        _ t: Transcript, _ outcome: LuaRunOutcome, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(outcome.exitCode, 1, "\(t.errors)", file: file, line: line)
        XCTAssertEqual(t.errors.count, 1, "\(t.errors)", file: file, line: line)
        let message = t.errors.first?.message ?? ""
        XCTAssertTrue(message.contains("CPU limit exceeded"), message, file: file, line: line)
        XCTAssertTrue(message.contains("see --cpu-limit"), message, file: file, line: line)
        XCTAssertTrue(message.hasPrefix("hostile.lua:"), "names the script's line: \(message)", file: file, line: line)
    }

    // MARK: C loops of the standard library

    func testStringRepOfNothingReturnsAtOnce() async throws {
        let (t, outcome) = try await run("""
            print(#string.rep("", 1 << 62), #string.rep("", 1 << 62, ""), #("x"):rep(3, ""))
            print(pcall(string.rep, "x", 1 << 62))
            """)
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
        XCTAssertEqual(t.lines, ["0\t0\t3", "false\tresulting string too large"])
    }

    func testTableMoveStopsAtTheCPULimit() async throws {
        let (t, outcome) = try await run("table.move({}, 1, 1 << 50, 1, {})")
        assertStoppedByCPULimit(t, outcome)
    }

    func testTableMoveCannotBeSwallowedByPcall() async throws {
        let (t, outcome) = try await run("""
            while true do pcall(table.move, {}, 1, 1 << 50, 1, {}) end
            """)
        assertStoppedByCPULimit(t, outcome)
    }

    func testTableConcatOfEmptyStringsFromACIndexStopsAtTheCPULimit() async throws {
        // table.concat as __index answers "" for every index, without running any Lua code.
        let (t, outcome) = try await run("""
            local t = setmetatable({}, { __index = table.concat })
            print(#table.concat(t, "", 1, 1 << 50))
            """)
        assertStoppedByCPULimit(t, outcome)
    }

    func testTableInsertAndRemoveWithAHugeLengthStopAtTheCPULimit() async throws {
        for call in ["table.insert(t, 1, 'x')", "table.remove(t, 1)"] {
            let (t, outcome) = try await run("""
                local t = setmetatable({}, { __len = function() return 1 << 50 end })
                \(call)
                """)
            assertStoppedByCPULimit(t, outcome)
        }
    }

    func testTableSortWithCMetamethodsStopsAtTheCPULimit() async throws {
        // 2^31 - 2 elements that are all 0 (rawlen as __index), writes dropped (rawlen as __newindex).
        let (t, outcome) = try await run("""
            local t = setmetatable({}, { __len = function() return (1 << 31) - 2 end, __index = rawlen, __newindex = rawlen })
            table.sort(t)
            """)
        assertStoppedByCPULimit(t, outcome)
    }

    func testSortOfAPlainArrayStopsAtTheCPULimitInsideTheSort() async throws {
        // 4 million integers, built in slices that wait in between; the sort alone runs past the
        // limit. The error names the sort's line: the sort itself stopped, not the next instruction.
        let (t, outcome) = try await run("""
            local t, seed = {}, 1
            for slice = 1, 80 do
              for i = 1, 50000 do seed = (seed * 1103515245 + 12345) % 2147483648; t[#t + 1] = seed end
              sleep(0)
            end
            print("built", #t)
            table.sort(t)
            print("sorted")
            """, memoryLimit: 512 << 20)
        assertStoppedByCPULimit(t, outcome)
        XCTAssertEqual(t.lines, ["built\t4000000"])
        XCTAssertTrue(t.errors.first?.message.hasPrefix("hostile.lua:7:") == true, "\(t.errors)")
    }

    func testSortNearTheMemoryLimitStillSucceeds() async throws {
        // 500,000 strings fill half of a 16 MB state; Lookout's own sort would need 20 MB more for
        // its buffers, so Lua's in-place sort runs instead, as it always did.
        let (t, outcome) = try await run("""
            local t = {}
            for i = 1, 500000 do t[i] = "a" .. (i % 10) end
            table.sort(t)
            print(t[1], t[#t], #t)
            """, cpuLimit: 60, memoryLimit: 16 << 20)
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
        XCTAssertEqual(t.lines, ["a0\ta9\t500000"])
    }

    func testPlainArraysSortAsLuasSortDoes() async throws {
        // Integers, floats and strings are sorted by Lookout's own sort; the same values sorted
        // through a comparator (Lua's sort) must come out the same. Mixed values, NaN and tables
        // with a metatable take Lua's sort.
        let (t, outcome) = try await run("""
            math.randomseed(7)
            local function same(values, name)
              local a, b = table.move(values, 1, #values, 1, {}), table.move(values, 1, #values, 1, {})
              table.sort(a)
              table.sort(b, function(x, y) return x < y end)
              for i = 1, #values do
                assert(a[i] == b[i] and math.type(a[i]) == math.type(b[i]), name .. " differs at " .. i)
              end
            end
            for _, n in ipairs { 2, 3, 16, 17, 1000, 20000 } do
              local ints, floats, strings, few, down, mixed = {}, {}, {}, {}, {}, {}
              for i = 1, n do
                ints[i] = math.random(math.mininteger, math.maxinteger)
                floats[i] = (math.random() - 0.5) * 1e10
                strings[i] = ("a\0b"):rep(math.random(0, 2)) .. string.char(math.random(0, 255)) .. math.random(50)
                few[i] = math.random(3)
                down[i] = n - i
                mixed[i] = i % 2 == 0 and i or i + 0.5
              end
              for name, values in pairs { ints = ints, floats = floats, strings = strings, few = few, down = down, mixed = mixed } do
                same(values, name .. n)
              end
            end
            local s = { "b", "a\0b", "a", "a\0a", "a\0" }
            table.sort(s)
            print((table.concat(s, ","):gsub("%z", "0")))
            local f = { 3.0, -1.5, math.huge, -math.huge, 2.5 }
            table.sort(f)
            print(table.concat(f, ","))
            print(pcall(table.sort, { 1, "x" }))
            local m = setmetatable({ 3, 1, 2 }, { __index = function() end })
            table.sort(m)
            print(table.concat(m, ","))
            """, cpuLimit: 30)
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
        XCTAssertEqual(t.lines, [
            "a,a0,a0a,a0b,b",
            "-inf,-1.5,2.5,3.0,inf",
            "false\tattempt to compare string with number",
            "1,2,3",
        ])
    }

    func testGuardedTableFunctionsKeepLuasResultsAndErrors() async throws {
        let (t, outcome) = try await run("""
            local t = {1, 2, 3}
            table.insert(t, 4); table.insert(t, 1, 0)
            print(table.concat(t, ","), table.remove(t), table.remove(t, 1), table.concat(t, ","))
            print(table.concat(table.move({1, 2, 3}, 1, 3, 2), ","), table.concat({}, ","), table.concat({1, 2, 3}, "-", 2, 3))
            local s = {5, 3, 9, 1}; table.sort(s); print(table.concat(s, ","))
            table.sort(s, function(a, b) return a > b end); print(table.concat(s, ","))
            print(pcall(table.insert, {}, 5, 1))
            print(pcall(table.insert, {}, 1, 2, 3))
            print(pcall(table.concat, {1, {}, 3}))
            print(pcall(table.sort, {3, 1}, 5))
            print(pcall(table.move, {}, -1, math.maxinteger, 1))
            print(pcall(setmetatable, 1, {}))
            print(select("#", table.remove({})), table.remove({}, 1))
            """)
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
        XCTAssertEqual(t.lines, [
            "0,1,2,3,4\t4\t0\t1,2,3",
            "1,1,2,3\t\t2-3",
            "1,3,5,9",
            "9,5,3,1",
            "false\tbad argument #2 to 'table.insert' (position out of bounds)",
            "false\twrong number of arguments to 'insert'",
            "false\tinvalid value (table) at index 2 in table for 'concat'",
            "false\tbad argument #2 to 'table.sort' (function expected, got number)",
            "false\tbad argument #3 to 'table.move' (too many elements to move)",
            "false\tbad argument #1 to 'setmetatable' (table expected, got number)",
            "1\tnil",
        ])
    }

    // MARK: Finalizers

    func testScriptsCannotInstallFinalizers() async throws {
        let (t, outcome) = try await run("""
            print(pcall(setmetatable, {}, { __gc = false }))
            setmetatable({}, { __gc = function() while true do end end })
            """)
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertEqual(t.lines.count, 1)
        XCTAssertTrue(t.lines.first?.hasPrefix("false\tbad argument #2 to 'setmetatable' (__gc metamethods are not allowed") == true, "\(t.lines)")
        let message = t.errors.first?.message ?? ""
        XCTAssertTrue(message.hasPrefix("hostile.lua:2: bad argument #2 to 'setmetatable'"), message)
        XCTAssertTrue(message.contains("finalizers run outside the CPU and time limits"), message)
    }

    func testAFinalizerAddedLaterToAMetatableNeverRuns() async throws {
        // Lua marks an object for finalization only if its metatable has __gc when it is set.
        let (t, outcome) = try await run("""
            local mt = {}
            setmetatable({}, mt)
            mt.__gc = function() while true do end end
            collectgarbage(); collectgarbage()
            print(pcall(setmetatable, {}, mt))
            print("after")
            """)
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
        XCTAssertEqual(t.lines.count, 2)
        XCTAssertTrue(t.lines.first?.hasPrefix("false\tbad argument #2 to 'setmetatable' (__gc") == true, "\(t.lines)")
    }

    func testTheErrorMetatableIsHiddenFromScripts() async throws {
        // Else a script could give it a __gc, and the host would mark every later error table.
        let (t, outcome) = try await run("""
            local h = task.spawn(function() sleep(5) end)
            local ok, err = task.wait(h, 0.01)
            print(ok, err.code, tostring(err), getmetatable(err))
            """)
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
        XCTAssertEqual(t.lines, ["false\ttimeout\tthe task did not end in time\tfalse"])
    }

    // MARK: Error handling and <close> handlers run by the host

    func testAnErrorObjectWhoseTostringLoopsIsStoppedByTheCPULimit() async throws {
        let (t, outcome) = try await run("""
            error(setmetatable({}, { __tostring = function() while true do end end }))
            """)
        XCTAssertEqual(outcome.exitCode, 1)
        let message = t.errors.first?.message ?? ""
        XCTAssertTrue(message.hasPrefix("(error while formatting an error: "), message)
        XCTAssertTrue(message.contains("CPU limit exceeded: error handling or a <close> variable ran 0.2 s (see --cpu-limit)"), message)
    }

    func testACloseHandlerThatLoopsDuringAnErrorIsStoppedByTheCPULimit() async throws {
        let (t, outcome) = try await run("""
            local guard <close> = setmetatable({}, { __close = function() while true do end end })
            error("boom")
            """)
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertEqual(t.errors.first?.message, "hostile.lua:2: boom")
        XCTAssertTrue(t.warnings.contains { $0.contains("while closing variables of main chunk") && $0.contains("CPU limit exceeded") }, "\(t.warnings)")
    }

    func testACloseHandlerThatLoopsAfterTheCPULimitStoppedTheTaskIsStoppedToo() async throws {
        // The hook stops the task by yielding it (an error raised inside a hook would leave Lua's
        // hooks off on that thread while the <close> handler runs).
        let (t, outcome) = try await run("""
            local guard <close> = setmetatable({}, { __close = function() while true do end end })
            while true do end
            """)
        assertStoppedByCPULimit(t, outcome)
        XCTAssertTrue(t.warnings.contains { $0.contains("CPU limit exceeded: error handling or a <close> variable ran 0.2 s") }, "\(t.warnings)")
    }

    func testAMessageHandlerThatLoopsInACloseHandlerIsStoppedByTheCPULimit() async throws {
        let (t, outcome) = try await run("""
            local guard <close> = setmetatable({}, { __close = function()
              xpcall(error, function() while true do end end)
              while true do end
            end })
            error("boom")
            """)
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertTrue(t.warnings.contains { $0.contains("CPU limit exceeded") }, "\(t.warnings)")
    }

    func testAMessageHandlerThatLoopsIsStoppedByTheCPULimit() async throws {
        let (t, outcome) = try await run("""
            print(xpcall(function() error("x") end, function() while true do end end))
            print("not reached")
            """)
        assertStoppedByCPULimit(t, outcome)
        XCTAssertFalse(t.lines.contains("not reached"))
    }

    func testAMessageHandlerDoesNotRunForALimitError() async throws {
        // The loop trips the limit inside xpcall; Lua would call the handler with hooks off.
        let (t, outcome) = try await run("""
            print(xpcall(function() while true do end end, function(m) print("handler", m); while true do end end))
            """)
        assertStoppedByCPULimit(t, outcome)
        XCTAssertEqual(t.lines, [])
    }

    func testMessageHandlersStillRunForOtherErrorsAndTasksCanWaitInXpcall() async throws {
        let (t, outcome) = try await run("""
            print(xpcall(function() sleep(0.01); error("x", 0) end, function(m) return "handled " .. m end))
            """)
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
        XCTAssertEqual(t.lines, ["false\thandled x"])
    }

    func testCodeRunByTheHostGetsOnlyABoundedMemoryOverdraft() async throws {
        // An error object's __tostring runs while the host formats the error: it may use up to
        // 1 MiB beyond the memory limit, never without limit.
        let (t, outcome) = try await run("""
            error(setmetatable({}, { __tostring = function()
              local t = {}
              for i = 1, 1e5 do t[i] = string.rep("x", 1000) .. i end
            end }))
            """, cpuLimit: 30, memoryLimit: 8 << 20)
        XCTAssertEqual(outcome.exitCode, 1)
        let message = t.errors.first?.message ?? ""
        XCTAssertTrue(message.hasPrefix("(error while formatting an error: "), message)
        XCTAssertTrue(message.contains("not enough memory"), message)
    }
}
