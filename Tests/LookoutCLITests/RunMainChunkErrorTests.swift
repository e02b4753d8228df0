import Foundation
import XCTest

/// Issue 24: `lookout run` whose main chunk raised exits 1 at once, whatever it had started
/// before (schedule jobs, repeating timers, sleeping tasks), instead of running on without it.
final class RunMainChunkErrorTests: CLITestCase, @unchecked Sendable {
    func testAMainChunkErrorEndsTheRunAtOnceDespiteScheduleJobsTimersAndTasks() throws {
        let result = try runScript(
            """
            local schedule = require "schedule"
            schedule.every("1m", function() print("job ran") end)
            timer.every("1h", function() print("timer ran") end)
            task.spawn(function() sleep("1h") end)
            print("started")
            error("broken on purpose")
            """, name: "broken.lua", timeout: 30)
        assertExit(result, 1)
        XCTAssertTrue(result.stdout.hasPrefix("started\n"), result.description)
        XCTAssertFalse(result.stdout.contains("timer ran"), result.description)
        XCTAssertTrue(result.stderr.contains("broken.lua:6: broken on purpose"), result.description)
    }

    /// An error in a timer or a task (not the main chunk) still lets the rest of the run finish.
    func testAnErrorOutsideTheMainChunkDoesNotEndTheRun() throws {
        let result = try runScript(
            """
            timer.after(0.01, function() error("timer failure") end)
            task.spawn(function() sleep(0.2); print("still ran") end)
            """, name: "late.lua", timeout: 30)
        assertExit(result, 1)
        XCTAssertEqual(result.stdout, "still ran\n")
    }
}
