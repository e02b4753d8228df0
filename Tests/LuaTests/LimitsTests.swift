import Lua
import LookoutTestSupport
import XCTest

final class LimitsTests: XCTestCase {
    func testCPULimitStopsInfiniteLoopWhileAnotherStateKeepsWorking() async throws {
        let healthy = Transcript()
        let other = LuaRuntime(options: testOptions(healthy, name: "healthy.lua"))
        try await other.start()
        async let healthyRun = other.run(source: Array("""
            local n = 0
            for i = 1, 20 do sleep(0.01); n = n + 1 end
            print("ticks", n)
            """.utf8), chunkName: "@healthy.lua")
        let (t, outcome) = try await runLua("while true do end", name: "spin.lua") { $0.cpuLimit = 0.2 }
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertTrue(t.errors.first?.message.contains("CPU limit exceeded") == true, "\(t.errors)")
        XCTAssertTrue(t.errors.first?.message.hasPrefix("spin.lua:1:") == true, "\(t.errors)")
        let healthyOutcome = await healthyRun
        await other.close()
        XCTAssertEqual(healthy.lines, ["ticks\t20"])
        XCTAssertEqual(healthyOutcome.exitCode, 0)
    }

    func testCPULimitCannotBeSwallowedByPcall() async throws {
        let (t, outcome) = try await runLua("""
            local caught = 0
            while true do
              local ok = pcall(function() while true do end end)
              caught = caught + 1
            end
            """) { $0.cpuLimit = 0.1 }
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertTrue(t.errors.first?.message.contains("CPU limit exceeded") == true, "\(t.errors)")
    }

    func testCPULimitCountsOnlyComputingNotWaiting() async throws {
        let (t, outcome) = try await runLua("""
            for i = 1, 5 do
              local x = 0
              for j = 1, 2e5 do x = x + j end
              sleep(0.05)
            end
            print("finished")
            """) { $0.cpuLimit = 0.2 }
        XCTAssertEqual(t.lines, ["finished"], "\(t.errors)")
        XCTAssertEqual(outcome.exitCode, 0)
    }

    func testMemoryLimitStopsHugeStringAndStateRecovers() async throws {
        let (t, outcome) = try await runLua("""
            local ok, err = pcall(string.rep, "x", 1e9)
            print(ok, err)
            local big = {}
            local ok2, err2 = pcall(function() for i = 1, 1e8 do big[i] = i end end)
            big = nil
            collectgarbage()
            print(ok2, err2)
            print("still alive", #string.rep("y", 1000))
            """) { $0.memoryLimit = 16 << 20 }
        XCTAssertEqual(t.lines.count, 3, "\(t.lines) \(t.errors)")
        XCTAssertEqual(t.lines[0], "false\tnot enough memory")
        XCTAssertTrue(t.lines[1].hasPrefix("false\t"), t.lines[1])
        XCTAssertTrue(t.lines[1].contains("not enough memory"), t.lines[1])
        XCTAssertEqual(t.lines[2], "still alive\t1000")
        XCTAssertEqual(outcome.exitCode, 0)
    }

    func testUncaughtMemoryErrorNamesTheLimit() async throws {
        let (t, outcome) = try await runLua("local s = string.rep('x', 1e9)") { $0.memoryLimit = 8 << 20 }
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertEqual(t.errors.first?.message, "not enough memory (memory limit 8 MiB reached; see --memory-limit)")
    }

    func testTimeLimitStopsWallClock() async throws {
        let (t, outcome) = try await runLua("""
            local n = 0
            while true do n = n + 1; if n % 1000 == 0 then task.yield() end end
            """) { $0.timeLimit = 0.3; $0.cpuLimit = 0 }
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertTrue(t.errors.first?.message.contains("time limit exceeded") == true, "\(t.errors)")
    }

    func testInterruptStopsComputingCode() async throws {
        let transcript = Transcript()
        let runtime = LuaRuntime(options: testOptions(transcript) { $0.cpuLimit = 0 })
        try await runtime.start()
        async let outcome = runtime.run(source: Array("print('start'); while true do end".utf8), chunkName: "@spin.lua")
        // Wait until the loop is running: the print happened before it.
        while transcript.lines.isEmpty { await Task.yield() }
        runtime.interrupt()
        let result = await outcome
        await runtime.close()
        XCTAssertEqual(result.exitCode, 130)
        XCTAssertTrue(result.interrupted)
    }
}
