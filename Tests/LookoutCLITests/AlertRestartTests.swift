import Foundation
import XCTest

/// An alert's saved state after a restart of its data source and of Lookout: the data decides,
/// and `lookout ack --list` says why an alert is in its state.
final class AlertRestartTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    /// The low alert's series: 29 readings a minute apart up to now, moved by `shift` ms; the
    /// last `low` minutes at 60 mg/dL, the rest at 100.
    private let script = """
        local alert = require "alert"
        local shift, low = tonumber(arg[1]), tonumber(arg[2])
        local now = os.time() * 1000
        local a = alert.define {
          id = "low", title = "Low", severity = "warning", notify = { "phone" },
          series = function()
            local points = {}
            for k = 28, 0, -1 do points[#points + 1] = { k <= low and 60 or 100, now - k * 60000 + shift } end
            return points
          end,
          when = alert.sustained(alert.below(70), "15m"), clear = alert.above(80),
        }
        print(a:check())
        """

    override func setUpWithError() throws {
        try super.setUpWithError()
        try "[notify.phone]\ntype = \"log\"\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        try writeFile("low.lua", script)
    }

    /// Before: readings in range, saved. Then the data source restarts and dates its readings
    /// 20 s apart from the old ones, all 28 minutes below 70: the sustained low fires at the
    /// first check. (The saved readings used to stay between the new ones and hold it back for
    /// the 15-minute window.)
    func testSavedStateDoesNotHoldBackALowTheDataShows() throws {
        let before = try lookout(["run", "low.lua", "0", "-1"])
        assertExit(before, 0)
        XCTAssertEqual(before.stdout, "ok\n")
        let after = try lookout(["run", "low.lua", "20000", "28"])
        assertExit(after, 0)
        XCTAssertEqual(after.stdout, "firing\n", after.stderr)
        let list = try lookout(["ack", "--list"])
        XCTAssertTrue(list.stdout.contains("below 70 for 15 min (last 60, "), list.stdout)
    }

    /// A sustained low that has held for 9 of its 15 minutes is `ok`, and says it is pending.
    func testAckListSaysWhyAnAlertIsNotFiringYet() throws {
        let run = try lookout(["run", "low.lua", "0", "9"])
        assertExit(run, 0)
        XCTAssertEqual(run.stdout, "ok\n")
        let list = try lookout(["ack", "--list"])
        assertExit(list, 0)
        XCTAssertTrue(list.stdout.contains("WHY"), list.stdout)
        // (The reading's age is 0 or 1 s, depending on when the second turns.)
        XCTAssertTrue(list.stdout.contains("pending: below 70 for 9 min of 15 min (last 60, "), list.stdout)
    }
}

/// Glucose in alert texts carries its unit, the other unit and the arrow; missing data has its
/// own title and text.
final class AlertTextTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    func testGlucoseAlertsSayTheirUnitsAndMissingDataSaysNoData() throws {
        try "[notify.phone]\ntype = \"log\"\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        try writeFile("texts.lua", """
            local alert = require "alert"
            local age = tonumber(arg[1])
            local low = alert.define {
              id = arg[2], title = "Low", notify = { "phone" }, units = "mmol",
              series = function() return 60, (os.time() - age) * 1000, "FortyFiveDown" end,
              when = alert.below(70),
            }
            print(low:check())
            """)
        let firing = try lookout(["run", "texts.lua", "0", "low"])
        assertExit(firing, 0)
        XCTAssertEqual(firing.stdout, "firing\n")
        XCTAssertTrue(firing.stderr.contains("Low: 3.3 mmol/L (60 mg/dL) ↘"), firing.stderr)

        let stale = try lookout(["run", "texts.lua", "1200", "gap"])
        XCTAssertEqual(stale.stdout, "stale\n")
        XCTAssertTrue(stale.stderr.contains("No data (Low)"), stale.stderr)
        XCTAssertTrue(stale.stderr.contains("No data for 20 min, last 3.3 mmol/L (60 mg/dL) ↘"), stale.stderr)

        try writeFile("bad.lua", "require('alert').define { id = 'x', series = function() end, when = require('alert').below(1), units = 'mmol/L' }")
        let bad = try lookout(["run", "bad.lua"])
        assertExit(bad, 1)
        XCTAssertTrue(bad.stderr.contains("opts.units: expected \"mg/dL\" or \"mmol\""), bad.stderr)
    }
}
