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

    /// What the demo shows is told the way people read it: BG with its unit, the other unit in
    /// parentheses and the arrow; alert texts in story time (each reading stands for 5 minutes,
    /// so a repeat says "for 5 min", never "for 3s"); the heavy-weather note at the bridge's own
    /// 20-knot threshold.
    func testTheStoryIsToldInStoryTimeUnitsAndArrows() throws {
        let run = try lookout(["demo", "--plain", "--duration", "40", "--step", "1"], timeout: 120)
        assertExit(run, 0)
        let bgLines = run.stdout.split(separator: "\n").filter { $0.hasPrefix("BG ") }
        XCTAssertFalse(bgLines.isEmpty, run.stdout)
        for line in bgLines {
            XCTAssertTrue(line.contains(" mg/dL (") && line.contains(" mmol/L)"), String(line))
            XCTAssertTrue(["↑↑", "↑", "↗", "→", "↘", "↓", "↓↓"].contains { line.contains(" \($0);") }, String(line))
        }
        XCTAssertTrue(bgLines.first?.contains("→") ?? false, "the story opens level: \(bgLines.first ?? "")")
        // The urgent low repeats in story time.
        XCTAssertTrue(run.stderr.contains("Urgent low: "), run.stderr)
        // In minutes of story time: one reading (5 min) per real second, so a check that runs a
        // little late says "for 9 min" instead of "for 5 min"; either is story time.
        XCTAssertNotNil(run.stderr.range(of: #"\((still, for|not acknowledged for) \d+ min\)"#, options: .regularExpression), run.stderr)
        XCTAssertNil(run.stderr.range(of: #"for \d+ ?s\)"#, options: .regularExpression), run.stderr)
        // The squall is noted at the script's threshold.
        let note = try XCTUnwrap(run.stderr.range(of: #"Heavy weather on board: wind (\d+) kn"#, options: .regularExpression), run.stderr)
        let knots = Int(run.stderr[note].split(separator: " ")[5]) ?? 0
        XCTAssertGreaterThanOrEqual(knots, 20, String(run.stderr[note]))
    }

    func testBadOptionsAreUsageErrors() throws {
        let run = try lookout(["demo", "--step", "0"])
        assertExit(run, 2)
        XCTAssertTrue(run.stderr.contains("--step takes 1 to 300 seconds"), run.stderr)
    }
}
