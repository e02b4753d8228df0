import Foundation
import XCTest

/// `lookout demo`: the README's first command, run briefly without a terminal.
final class DemoCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    func testDemoRunsTheStoryAndTheBridges() throws {
        let run = try lookout(["demo", "--plain", "--duration", "6", "--step", "1"])
        assertExit(run, 0)
        XCTAssertTrue(run.stdout.contains("BG "), run.stdout)
        XCTAssertTrue(run.stdout.contains("demo stopped:"), run.stdout)
        // The Nightscout → Signal K bridge reached the Signal K simulator and said so.
        XCTAssertTrue(run.stderr.contains("nightscout-to-signalk.lua: notification:"), run.stderr)
        XCTAssertFalse(run.stderr.contains("error"), run.stderr)
    }

    func testBadOptionsAreUsageErrors() throws {
        let run = try lookout(["demo", "--step", "0"])
        assertExit(run, 2)
        XCTAssertTrue(run.stderr.contains("--step takes 1 to 300 seconds"), run.stderr)
    }
}
