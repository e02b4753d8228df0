import Lua
import LookoutTestSupport
import XCTest

final class SchedulerTests: XCTestCase {
    func testPrintAndExitStatus() async throws {
        let (t, outcome) = try await runLua("print('hello', 1, 2.5, nil, true)")
        XCTAssertEqual(t.lines, ["hello\t1\t2.5\tnil\ttrue"])
        XCTAssertEqual(outcome.exitCode, 0)
    }

    func testSleepAndTimersInterleave() async throws {
        let (t, outcome) = try await runLua("""
            timer.after(0.02, function() print("timer") end)
            task.spawn(function() sleep(0.01); print("spawned") end)
            print("main")
            sleep(0.03)
            print("main again")
            """)
        XCTAssertEqual(t.lines, ["main", "spawned", "timer", "main again"])
        XCTAssertEqual(outcome.exitCode, 0, "\(t.errors)")
    }

    func testErrorHasTracebackWithFileAndLine() async throws {
        let (t, outcome) = try await runLua("""
            local function inner() error("boom") end
            local function outer() inner() end
            outer()
            """, name: "alerts.lua")
        XCTAssertEqual(outcome.exitCode, 1)
        let error = try XCTUnwrap(t.errors.first)
        XCTAssertEqual(error.message, "alerts.lua:1: boom")
        XCTAssertEqual(error.task, "main chunk")
        XCTAssertTrue(error.traceback.contains("alerts.lua:3: in main chunk"), error.traceback)
    }
}
