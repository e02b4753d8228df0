import Foundation
import Lua
import XCTest

@testable import LookoutModules
@testable import LookoutScenarios

/// Scenario files: the built-ins load and have the shapes their names promise; expectations
/// match recorded side effects, notifications (kind `notify`) included.
final class ScenarioTests: XCTestCase {
    func testBuiltinsLoadWithTheirEvents() async throws {
        for name in BuiltinScenarios.names {
            let s = try await ScenarioLoader.load(name)
            XCTAssertEqual(s.name, name)
            XCTAssertFalse(s.expectations.isEmpty, name)
            for e in s.expectations where e.event != nil {
                XCTAssertNotNil(e.eventTime(in: s), "\(name): \(e.text) never happens")
            }
        }
        let low = try await ScenarioLoader.load("overnight-low")
        XCTAssertEqual(low.readings.filter { $0.time >= low.start }.count, 97, "8 hours of 5-minute readings")
        XCTAssertLessThan(low.readings.map(\.sgv).min() ?? 0, 55)
        XCTAssertGreaterThan(low.readings.first { $0.time >= low.start }?.sgv ?? 0, 130)

        let gap = try await ScenarioLoader.load("sensor-gap")
        let gapStart = gap.start.addingTimeInterval(3 * 3600), gapEnd = gap.start.addingTimeInterval(3 * 3600 + 45 * 60)
        XCTAssertFalse(gap.readings.contains { $0.time >= gapStart && $0.time < gapEnd })
        XCTAssertTrue(gap.readings.contains { $0.time == gapEnd })

        let loop = try await ScenarioLoader.load("not-looping")
        XCTAssertEqual(loop.loopReports.last, loop.start.addingTimeInterval(2 * 3600))

        let rise = try await ScenarioLoader.load("post-meal-rise")
        let steepest = zip(rise.readings, rise.readings.dropFirst()).map { Double($1.sgv - $0.sgv) / 5 }.max() ?? 0
        XCTAssertGreaterThan(steepest, 2.5, "rises at 3-4 mg/dL per minute")

        let dragScenario = try await ScenarioLoader.load("anchor-drag")
        let drag = try XCTUnwrap(dragScenario.boat)
        let distances = drag.samples.map { ScenarioTrace.distance(drag.anchorLatitude, drag.anchorLongitude, $0.latitude, $0.longitude) }
        XCTAssertLessThan(distances.prefix(180).max() ?? 99, 25, "swings within ~20 m before the drag")
        XCTAssertGreaterThan(distances.last ?? 0, 400)
    }

    func testBadScenarioFilesNameTheField() async throws {
        let cases: [(String, String)] = [
            ("return 42", "must return a table"),
            ("return { bgg = {} }", "unknown field 'bgg'"),
            ("return { bg = { points = { {\"x\", 1} } } }", "bg.points[1][1]"),
            ("return { expect = { { notify = 'a', of = 'ph < 7' } } }", "unknown quantity \"ph\""),
            ("return { expect = { { notify = 'a', no_log = 'b' } } }", "exactly one of"),
            ("error('nope')", "nope"),
        ]
        for (source, expected) in cases {
            do {
                _ = try await ScenarioLoader.load(source: source, chunkName: "=t")
                XCTFail("\(source) loaded")
            } catch {
                XCTAssertTrue("\(error)".contains(expected), "\(source): \(error)")
            }
        }
    }

    private func scenario(_ expect: String) async throws -> Scenario {
        try await ScenarioLoader.load(source: """
            return { start = "2026-01-10T22:00:00Z", hours = 4,
              bg = { noise = 0, history = "0m", points = { {"0m", 120}, {"1h", 60}, {"1h30m", 45}, {"2h", 110} } },
              expect = { \(expect) } }
            """, chunkName: "=t")
    }

    private func notify(_ s: Scenario, _ minutes: Double, id: String, severity: String = "urgent") -> SideEffect {
        SideEffect(time: s.start.addingTimeInterval(minutes * 60), kind: "notify", target: "phone", summary: "Urgent low",
                   details: ["alert_id": id, "severity": severity, "title": "Urgent low"])
    }

    func testNotifyWithinWindowOfCondition() async throws {
        let s = try await scenario(#"{ notify = "urgent-low", within = "15m", of = "bg < 55" }"#)
        let event = try XCTUnwrap(s.expectations[0].eventTime(in: s))
        XCTAssertEqual(event, s.start.addingTimeInterval(75 * 60), "first reading below 55: 120→60 in 1h, then 5 mg/dL per 5 min")
        let e = s.expectations[0]
        XCTAssertTrue(e.evaluate([notify(s, 80, id: "urgent-low")], scenario: s).passed)
        let late = e.evaluate([notify(s, 95, id: "urgent-low")], scenario: s)
        XCTAssertFalse(late.passed)
        XCTAssertTrue(late.detail.contains("first match only at +01:35"), late.detail)
        XCTAssertFalse(e.evaluate([notify(s, 80, id: "low")], scenario: s).passed, "another alert does not count")
        XCTAssertFalse(e.evaluate([notify(s, 70, id: "urgent-low")], scenario: s).passed, "before the event does not count")
    }

    func testNoNotifyAndSeverity() async throws {
        let s = try await scenario(#"{ no_notify = "high" }, { notify = "urgent-low", severity = "urgent" }"#)
        let effects = [notify(s, 80, id: "urgent-low", severity: "warning")]
        let results = ScenarioReport(scenario: s, script: "t.lua", effects: effects, scriptErrors: [], notices: [], realSeconds: 0).results
        XCTAssertEqual(results.map(\.passed), [true, false])
        let text = ScenarioReport(scenario: s, script: "t.lua", effects: effects, scriptErrors: [], notices: [], realSeconds: 0).text
        XCTAssertTrue(text.contains("+01:20    notify             phone      Urgent low [urgent-low, warning]"), text)
        let fired = s.expectations[0].evaluate([notify(s, 10, id: "high")], scenario: s)
        XCTAssertFalse(fired.passed)
    }

    func testOtherFamiliesAndReport() async throws {
        let s = try await scenario("""
            { log = "LOW", within = "10m", of = "bg < 55" }, { upload = "treatments" }, { no_remote = true },
            { signalk = "notifications.mob" }, { effect = "nightscout.delete", match = "abc" }
            """)
        let t = { (m: Double) in s.start.addingTimeInterval(m * 60) }
        let effects = [
            SideEffect(time: t(80), kind: "log", target: "t.lua", summary: "LOW 52 mg/dL"),
            SideEffect(time: t(80), kind: "nightscout.upload", target: "home", summary: "upload treatments eventType=Note",
                       details: ["collection": "treatments"]),
            SideEffect(time: t(90), kind: "signalk.put", target: "boat", summary: "put notifications.mob = {}"),
        ]
        let report = ScenarioReport(scenario: s, script: "t.lua", effects: effects, scriptErrors: [], notices: [], realSeconds: 0.5)
        XCTAssertEqual(report.results.map(\.passed), [true, true, true, true, false])
        XCTAssertFalse(report.passed)
        XCTAssertTrue(report.text.contains("+01:20    log"), report.text)
        XCTAssertTrue(report.text.contains("FAILED: 1 of 5"), report.text)
        let json = try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any]
        XCTAssertEqual((json?["timeline"] as? [Any])?.count, 3)
        XCTAssertEqual(json?["passed"] as? Bool, false)
    }
}
