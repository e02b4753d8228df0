import Foundation
import Lua
import LookoutTestSupport
import XCTest

/// Issue 26: Lua as the manual describes it, where the host must see it (warnings, several states,
/// `--trusted`). What a script alone can check is in lua/test_stock.lua.
final class StockBehaviourTests: XCTestCase {
    /// Runs `source` and closes the runtime; fails instead of hanging past a minute.
    private func run(_ source: String, configure: (inout LuaOptions) -> Void = { _ in }) async throws -> (Transcript, LuaRunOutcome) {
        let transcript = Transcript()
        let runtime = LuaRuntime(options: testOptions(transcript, name: "stock.lua", configure: configure))
        try await runtime.start()
        let outcome = try await runGuarded(runtime, source, chunkName: "@stock.lua", guardSeconds: 60)
        return (transcript, outcome)
    }

    func testWarnFollowsTheControlMessages() async throws {
        let (t, outcome) = try await run("""
            warn("shown ", "1")
            warn("@off")
            warn("hidden")
            warn("hid", "den")
            warn("@on")
            warn("shown 2")
            warn("@unknown")
            """)
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
        XCTAssertEqual(t.warnings, ["shown 1", "shown 2"])
    }

    /// The main chunk sees itself as the main coroutine, yet it still waits on host work, also from
    /// inside a coroutine it made.
    func testTheMainChunkIsMainAndStillWaits() async throws {
        let (t, outcome) = try await run("""
            print(select(2, coroutine.running()), coroutine.isyieldable())
            sleep(0.001)
            local f = coroutine.wrap(function(a) sleep(0.001); local b = coroutine.yield(a + 1); sleep(0.001); return b * 2 end)
            print(f(1), f(20))
            print(pcall(coroutine.yield, 1))
            print("a", coroutine.yield(1, 2))
            print("not reached")
            """)
        XCTAssertEqual(t.lines, ["true\tfalse", "2\t40", "false\tattempt to yield from outside a coroutine"])
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertEqual(t.errors.count, 1)
        XCTAssertTrue(t.errors.first?.message.contains("attempt to yield from outside a coroutine") == true, "\(t.errors)")
    }

    /// Each script has its own state: a hostile script that rewrites the string metatable changes
    /// only its own strings, and whatever it installs there runs under its own limits.
    func testStringMetatableChangesStayInTheirOwnState() async throws {
        let hostile = Transcript()
        let other = Transcript()
        let a = LuaRuntime(options: testOptions(hostile, name: "hostile.lua") { $0.cpuLimit = 0.2 })
        let b = LuaRuntime(options: testOptions(other, name: "other.lua"))
        try await a.start()
        try await b.start()
        let first = try await runGuarded(a, """
            local mt = getmetatable("")
            mt.__index = function() return function() return "hijacked" end end
            mt.__tostring = function() return "hijacked" end
            print(("x"):upper(), tostring("x"))
            mt.__index = function() while true do end end
            print(("x"):upper())
            """, chunkName: "@hostile.lua", guardSeconds: 60)
        XCTAssertEqual(hostile.lines, ["hijacked\thijacked"])
        XCTAssertEqual(first.exitCode, 1)
        XCTAssertTrue(hostile.errors.first?.message.contains("CPU limit exceeded") == true, "\(hostile.errors)")
        let second = try await runGuarded(b, """
            print(("x"):upper(), tostring("x"), getmetatable("").__index == string)
            """, chunkName: "@other.lua", guardSeconds: 60)
        XCTAssertEqual(second.exitCode, 0, "\(other.errors)")
        XCTAssertEqual(other.lines, ["X\tx\ttrue"])
    }

    func testTrustedScriptsGetTheWholeLibrary() async throws {
        let (t, outcome) = try await run("""
            print(type(debug.getinfo), type(debug.sethook), type(debug.getlocal), type(io.write), type(os.getenv))
            print(collectgarbage("stop"), collectgarbage("isrunning"), collectgarbage("restart"), collectgarbage("isrunning"))
            print(collectgarbage("generational"), collectgarbage("incremental"))
            print(pcall(collectgarbage, "bogus"))
            local finalized = false
            setmetatable({}, { __gc = function() finalized = true end })
            collectgarbage(); collectgarbage()
            print(finalized)
            print(load(string.dump(function() return 7 end), "bin", "b")())
            """) { $0.trusted = true }
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
        XCTAssertEqual(t.lines, [
            "function\tfunction\tfunction\tfunction\tfunction",
            "0\tfalse\t0\ttrue",
            "incremental\tgenerational",
            "false\tbad argument #1 to 'collectgarbage' (invalid option 'bogus')",
            "true",
            "7",
        ])
    }

    func testTheSandboxStillRefusesCollectorModesAndFinalizers() async throws {
        let (t, outcome) = try await run("""
            print(pcall(collectgarbage, "stop"))
            print(pcall(setmetatable, {}, { __gc = print }))
            print(debug.sethook, debug.getinfo)
            """)
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
        XCTAssertEqual(t.lines.count, 3, "\(t.lines)")
        XCTAssertEqual(t.lines[0], "false\tbad argument #1 to 'collectgarbage' ('stop' is not allowed in the sandbox (see --trusted))")
        XCTAssertTrue(t.lines[1].hasPrefix("false\t") && t.lines[1].contains("__gc"), t.lines[1])
        XCTAssertEqual(t.lines[2], "nil\tnil")
    }

    /// With the collector stopped, the memory limit still holds (Lua's emergency collection runs).
    func testStoppingTheCollectorKeepsTheMemoryLimit() async throws {
        let (t, outcome) = try await run("""
            collectgarbage("stop")
            for i = 1, 40 do local s = string.rep("x", 1 << 20) end  -- garbage only: 40 MiB over time
            print("garbage collected", collectgarbage("isrunning"))
            print(pcall(string.rep, "x", 32 << 20))
            """) {
            $0.trusted = true
            $0.memoryLimit = 16 << 20
        }
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
        XCTAssertEqual(t.lines.first, "garbage collected\tfalse")
        XCTAssertTrue(t.lines.last?.hasPrefix("false\tnot enough memory") == true, "\(t.lines)")
        XCTAssertEqual(t.lines.count, 2, "\(t.lines)")
    }

    /// debug.sethook's hook runs, and the CPU limit still stops a loop while it is set (the limit
    /// hook takes the thread over and hands it back).
    func testDebugSethookComposesWithTheLimitHook() async throws {
        let (t, outcome) = try await run("""
            local lines = 0
            debug.sethook(function(event) lines = lines + 1 end, "l")
            local x = 0
            x = x + 1
            x = x + 1
            debug.sethook()
            print(lines >= 3, debug.gethook())
            local counts = 0
            debug.sethook(function() counts = counts + 1 end, "", 1000)
            local report <close> = setmetatable({}, { __close = function() print("counts", counts > 10) end })
            while true do end
            """) {
            $0.trusted = true
            $0.cpuLimit = 0.3
        }
        XCTAssertEqual(t.lines, ["true\tnil", "counts\ttrue"])
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertTrue(t.errors.first?.message.contains("CPU limit exceeded") == true, "\(t.errors)")
    }
}
