import Foundation
import XCTest

/// `lookout test SCRIPT --scenario …`: a night in virtual time against the simulators, a
/// timeline of what would have reached outside, and an exit status from the expectations.
final class TestCommandTests: CLITestCase, @unchecked Sendable {
    /// Polls the site every 5 minutes; on a low, warns once and records a note.
    let lowWatch = """
        local nightscout = require "nightscout"
        local home = assert(nightscout.client "home")
        local warned = false
        timer.every("5m", function()
          local e, err = home:latest()
          if not e then log.warn("no data: " .. tostring(err)) return end
          if e.age > 900 then log.warn(("stale: %d s"):format(e.age)) return end
          if e.sgv < 55 and not warned then
            warned = true
            log.warn(("LOW %d mg/dL at %s"):format(e.sgv, os.date("!%H:%M")))
            assert(home:upload_treatment { eventType = "Note", notes = "low " .. e.sgv })
          elseif e.sgv >= 70 then
            warned = false
          end
        end)
        """

    let scenario = """
        return {
          name = "low-test", start = "2026-01-10T22:00:00Z", hours = 8,
          bg = { noise = 0, points = { {"0m", 120}, {"1h", 60}, {"1h30m", 45}, {"2h", 110}, {"8h", 115} } },
          missed = { { from = "5h", to = "5h30m" } },
          expect = {
            { log = "LOW", within = "5m", of = "bg < 55" },
            { upload = "treatments", within = "5m", of = "bg < 55" },
            { log = "stale", within = "25m", of = "5h" },
            %@
          },
        }
        """

    func testPassingScenarioPrintsTimelineAndExitsZero() throws {
        try writeFile("low.lua", lowWatch)
        try writeFile("night.lua", scenario.replacingOccurrences(of: "%@", with: "{ no_remote = true },"))
        let result = try lookout(["test", "low.lua", "--scenario", "night.lua"], timeout: 120)
        assertExit(result, 0)
        let out = result.stdout
        XCTAssertTrue(out.contains("+01:15    log                low.lua    LOW 53 mg/dL at 23:15"), out)
        XCTAssertTrue(out.contains("nightscout.upload  home       upload treatments eventType=Note notes=low 53"), out)
        XCTAssertTrue(out.contains("+05:15    log"), "stale once the last reading (04:55) is over 15 minutes old\n\(out)")
        XCTAssertTrue(out.contains("ok: 4 expectations held"), out)
        XCTAssertEqual(out.components(separatedBy: "LOW ").count - 1, 1, "warned once per low")
    }

    func testFailingExpectationExitsOneAndJSONTellsWhy() throws {
        try writeFile("low.lua", lowWatch)
        try writeFile("night.lua", scenario.replacingOccurrences(of: "%@", with: "{ no_upload = true },"))
        let result = try lookout(["test", "low.lua", "--scenario", "night.lua", "--json"], timeout: 120)
        assertExit(result, 1)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.description)
        XCTAssertEqual(json["passed"] as? Bool, false)
        let results = try XCTUnwrap(json["results"] as? [[String: Any]])
        XCTAssertEqual(results.map { $0["passed"] as? Bool }, [true, true, true, false])
        XCTAssertTrue((results[3]["detail"] as? String ?? "").contains("1 matching, first at +01:15"), "\(results[3])")
        XCTAssertNotNil(json["realSeconds"] as? Double, "the report gives the real time taken")
    }

    func testBuiltinScenarioListAndBoatData() throws {
        let list = try lookout(["test", "--list"])
        assertExit(list, 0)
        for name in ["overnight-low", "compression-low", "sensor-gap", "post-meal-rise", "not-looping", "anchor-drag"] {
            XCTAssertTrue(list.stdout.contains(name), list.stdout)
        }
        // Anchor watch over REST-backed reads: the boat drifts beyond 40 m after 01:00.
        try writeFile("anchor.lua", """
            local signalk = require "signalk"
            local boat = assert(signalk.connect "boat")
            local function metres(a, b)
              local r, rad = 6371000, math.pi / 180
              local x = (b.longitude - a.longitude) * rad * math.cos((a.latitude + b.latitude) / 2 * rad)
              local y = (b.latitude - a.latitude) * rad
              return math.sqrt(x * x + y * y) * r
            end
            local anchor = assert(boat:get "navigation.anchor.position")
            local alarmed = false
            timer.every("1m", function()
              local d = metres(anchor, assert(boat:get "navigation.position"))
              if d > 45 and not alarmed then
                alarmed = true
                log.warn(("anchor drag: %.0f m"):format(d))
                boat:put("notifications.anchor", { state = "alarm", message = "anchor drag" })
              end
            end)
            """)
        try writeFile("drag.lua", """
            return {
              name = "drag", hours = 5, start = "2026-01-10T22:00:00Z",
              boat = { anchor = { lat = 59.85, lon = 10.64 }, radius = 40, every = "1m", swing = 0,
                       points = { {"0m", 10}, {"3h", 10}, {"3h20m", 70}, {"4h", 200} } },
              garmin = { heart_rate = { 60 } },
              expect = { { signalk = "notifications.anchor", within = "10m", of = "drift > 45" } },
            }
            """)
        let result = try lookout(["test", "anchor.lua", "--scenario", "drag.lua"], timeout: 120)
        assertExit(result, 0)
        XCTAssertTrue(result.stdout.contains("+03:12    signalk.put        boat       put notifications.anchor"),
                      "boat:get reads what the simulator has at virtual now (43 m at +03:11, 46 m at +03:12)\n\(result.stdout)")
        XCTAssertFalse(result.stdout.contains("notice:"), "the garmin section starts the Garmin simulator\n\(result.stdout)")
    }

    func testSameNightSameTimeline() throws {
        try writeFile("low.lua", lowWatch)
        try writeFile("night.lua", scenario.replacingOccurrences(of: "%@", with: "")
            .replacingOccurrences(of: "noise = 0", with: "noise = 3, seed = 9"))
        var timelines: [String] = []
        for _ in 0..<3 {
            let result = try lookout(["test", "low.lua", "--scenario", "night.lua", "--json"], timeout: 120)
            let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.description)
            let timeline = try JSONSerialization.data(withJSONObject: json["timeline"] ?? [], options: [.sortedKeys])
            timelines.append(String(decoding: timeline, as: UTF8.self))
        }
        XCTAssertTrue(timelines[0].contains("LOW"), timelines[0])
        XCTAssertEqual(timelines[1], timelines[0])
        XCTAssertEqual(timelines[2], timelines[0])
    }

    func testUsageErrors() throws {
        try writeFile("x.lua", "print(1)")
        let noScenario = try lookout(["test", "x.lua"])
        XCTAssertNotEqual(noScenario.exitCode, 0)
        let unknown = try lookout(["test", "x.lua", "--scenario", "no-such-night"])
        assertExit(unknown, 2)
        XCTAssertTrue(unknown.stderr.contains("overnight-low"), unknown.stderr)
        let typo = try lookout(["test", "x.lua", "--scenario", "overnight-lwo"])
        assertExit(typo, 2)
        XCTAssertTrue(typo.stderr.contains("no scenario \"overnight-lwo\" (did you mean overnight-low?)"), typo.stderr)
    }

    /// The user's `[scripts."NAME".settings]` reach the script under test as under `serve`: a
    /// wrong type fails the test as it would fail the run.
    func testTheScriptsSettingsFromConfigAreUsed() throws {
        try writeFile("show.lua", """
            local s = require("config").settings { low = 70 }
            log.warn("low is " .. s.low)
            """)
        try "[scripts.\"show.lua\".settings]\nlow = 64\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let run = try lookout(["test", "show.lua", "--scenario", "sensor-gap", "--hours", "1", "--no-expect"])
        assertExit(run, 0)
        XCTAssertTrue(run.stdout.contains("low is 64"), run.stdout)
        try "[scripts.\"show.lua\".settings]\nlow = \"seventy\"\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let wrong = try lookout(["test", "show.lua", "--scenario", "sensor-gap", "--hours", "1", "--no-expect"])
        assertExit(wrong, 1)
        XCTAssertTrue(wrong.stdout.contains("script error:") && wrong.stdout.contains("low"), wrong.stdout)
    }

    /// A script with a syntax error never ran: no PASS line, and the report says why.
    func testAScriptThatDidNotLoadPassesNothing() throws {
        try writeFile("broken.lua", "local x = = 1")
        let run = try lookout(["test", "broken.lua", "--scenario", "overnight-low", "--hours", "1"])
        assertExit(run, 1)
        XCTAssertFalse(run.stdout.contains("PASS"), run.stdout)
        XCTAssertTrue(run.stdout.contains("FAILED: the script did not load, so no expectation was checked"), run.stdout)
    }

    /// A user's own alert script against a built-in scenario: the FAIL points to --show and
    /// --no-expect, and --no-expect shows the timeline without verdicts.
    func testBuiltinExpectationsPointToShowAndNoExpect() throws {
        try writeFile("mine.lua", """
            local alert = require "alert"
            log.warn("my own alert script")
            """)
        let run = try lookout(["test", "mine.lua", "--scenario", "overnight-low"])
        assertExit(run, 1)
        XCTAssertTrue(run.stderr.contains("lookout test --show overnight-low"), run.stderr)
        XCTAssertTrue(run.stderr.contains("--no-expect"), run.stderr)
        let timeline = try lookout(["test", "mine.lua", "--scenario", "overnight-low", "--no-expect"])
        assertExit(timeline, 0)
        XCTAssertTrue(timeline.stdout.contains("my own alert script"), timeline.stdout)
        XCTAssertFalse(timeline.stdout.contains("FAIL") || timeline.stdout.contains("PASS"), timeline.stdout)
    }

    /// `sim nightscout --scenario` used to spell it `overnightLow`: `lookout test` takes that too.
    func testTheOtherSpellingOfAScenarioNameIsTaken() throws {
        try writeFile("x.lua", "print(1)")
        let run = try lookout(["test", "x.lua", "--scenario", "overnightLow", "--no-expect"])
        XCTAssertFalse(run.stderr.contains("no scenario"), run.stderr)
    }
}
