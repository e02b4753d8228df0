import Lua
import LookoutTestSupport
import XCTest

final class CallbackErrorTests: XCTestCase {
    func testUnassignedTimerSurvivesGarbageCollection() async throws {
        let (t, outcome) = try await runLua("""
            local fired = 0
            timer.every(0.005, function(self) fired = fired + 1 end)  -- no variable holds it
            for i = 1, 5 do collectgarbage() ; sleep(0.005) end
            local ok = fired >= 2
            print(ok)
            require("script").exit(0)
            """)
        XCTAssertEqual(t.lines, ["true"])
        XCTAssertEqual(outcome.exitCode, 0)
    }

    func testErrorsInCallbacksAreReportedCountedAndHooked() async throws {
        let (t, outcome) = try await runLua("""
            local script = require "script"
            script.on_error(function(err) print("hook:", err.task, err.message) end)
            timer.after(0.001, function() error("in timer") end)
            task.spawn(function() local x = nil; return x.field end)
            """, name: "alerts.lua")
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertEqual(outcome.errors, 2)
        let messages = t.errors.map(\.message).sorted()
        XCTAssertEqual(messages, ["alerts.lua:3: in timer", "alerts.lua:4: attempt to index a nil value (local 'x')"])
        XCTAssertTrue(t.errors.contains { $0.task.hasPrefix("timer created at alerts.lua:3") }, "\(t.errors)")
        XCTAssertTrue(t.errors.contains { $0.task.hasPrefix("task spawned at alerts.lua:4") }, "\(t.errors)")
        XCTAssertEqual(t.lines.filter { $0.hasPrefix("hook:") }.count, 2, "\(t.lines)")
        XCTAssertTrue(t.errors.allSatisfy { $0.traceback.contains("alerts.lua") }, "\(t.errors)")
    }

    func testErrorObjectsThatAreTablesKeepTheirText() async throws {
        let (t, _) = try await runLua("""
            error(setmetatable({ code = 7 }, { __tostring = function(e) return "custom error " .. e.code end }))
            """)
        XCTAssertEqual(t.errors.first?.message, "custom error 7")
    }
}
