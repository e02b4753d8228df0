import Foundation
import LookoutTestSupport
import Lua
import XCTest

@testable import LookoutStore

/// The `alert` library's safety rules, each on its own, with a manual clock (no sleeps) and
/// recorded notifications.
final class AlertTests: XCTestCase {
    private let urgentLow = """
        local low = alert.define {
          id = "urgent-low", title = "Urgent low", severity = "urgent", series = series,
          when = alert.below(55), clear = alert.above(70), stale = "15m",
          notify = { "phone" }, escalate = { { after = "10m", notify = { "partner" } }, { after = "20m", notify = { "all" } } },
          repeat_every = "5m", quiet_hours = { from = "00:00", to = "23:59" },
        }

        """

    /// `tostring` of an alert never raises: before its first check it is "new", after it shows its
    /// state. (A `stale` out of range, such as 1e300, is refused by `define` itself.)
    func testToStringOfANewAlertDoesNotRaise() async throws {
        let h = try AlertHarness()
        let lines = try await h.run("""
            print((pcall(alert.define, { id = "huge", series = series, when = alert.below(55), stale = 1e300 })))
            local a = alert.define { id = "far", series = series, when = alert.below(55), stale = "366d" }
            print(pcall(tostring, a))
            local b = alert.define { id = "near", series = series, when = alert.below(55) }
            print(pcall(tostring, b))
            at(0, 100) b:check()
            print(tostring(b))
            """)
        XCTAssertEqual(lines, ["false", "true\talert far (new)", "true\talert near (new)", "alert near (ok)"])
    }

    func testFiringRepeatsAndEscalatesWithDistinctIDs() async throws {
        let h = try AlertHarness()
        let lines = try await h.run(urgentLow + """
            at(0, 100) print(low:check())
            at(5, 52) print(low:check())
            at(1, 51) print(low:check())
            at(4, 50) print(low:check())
            at(5, 50) print(low:check())
            at(10, 50) print(low:check())
            """)
        XCTAssertEqual(lines, ["ok", "firing", "firing", "firing", "firing", "firing"])
        XCTAssertEqual(h.notifications, [
            "phone firing urgent urgent-low",        // at once
            "phone repeat urgent urgent-low",        // 5 min later
            "partner escalated urgent urgent-low",   // 10 min: step 1
            // 20 min: "all" is every configured channel
            "partner escalated urgent urgent-low", "phone escalated urgent urgent-low", "watch escalated urgent urgent-low",
        ])
        XCTAssertEqual(Set(h.ids).count, h.ids.count, "every notification has its own id: \(h.ids)")
    }

    func testUrgentIsNeverMutedByQuietHoursOrByOtherAlertsSnoozes() async throws {
        let h = try AlertHarness()
        let lines = try await h.run(urgentLow + """
            local high = alert.define {
              id = "high", severity = "warning", series = series, when = alert.above(40), notify = { "phone" },
              quiet_hours = { from = "00:00", to = "23:59" },
            }
            local other = alert.define { id = "other", severity = "warning", series = series, when = alert.below(60), notify = { "watch" } }
            at(0, 100) print(low:check(), high:check(), other:check())
            print(alert.snooze("other", "2h")["until"] ~= nil)
            at(5, 50) print(low:check(), high:check(), other:check())
            at(5, 50) print(low:check(), high:check(), other:check())
            """)
        XCTAssertEqual(lines, ["ok\tfiring\tok", "true", "firing\tfiring\tsnoozed", "firing\tfiring\tsnoozed"])
        // The urgent low notifies inside quiet hours and while another alert is snoozed; the
        // warning inside quiet hours and the snoozed alert stay silent.
        XCTAssertEqual(h.notifications, ["phone firing urgent urgent-low", "phone repeat urgent urgent-low"])
    }

    func testStaleDataIsItsOwnAlertNeverOK() async throws {
        let h = try AlertHarness()
        let lines = try await h.run(urgentLow + """
            at(0, 120) print(low:check())
            at(10) print(low:check())
            at(6) print(low:check(), low:status().state)
            at(30) print(low:check())
            at(1, 110) print(low:check())
            """)
        // 16 minutes without a new reading: stale, not "ok" (the last value was fine).
        XCTAssertEqual(lines, ["ok", "ok", "stale\tstale", "stale", "ok"])
        XCTAssertEqual(h.notifications.first, "phone stale urgent urgent-low")
    }

    func testNoAlertOnDataOlderThanTheWindow() async throws {
        let h = try AlertHarness()
        let lines = try await h.run(urgentLow + """
            feed(40)           -- a very low reading…
            at(20)             -- …but 20 minutes old when first checked
            print(low:check())
            """)
        XCTAssertEqual(lines, ["stale"])
        XCTAssertFalse(h.notifications.contains { $0.contains("firing") }, "\(h.notifications)")
    }

    func testNoFalseAlertRightAfterStart() async throws {
        let h = try AlertHarness()
        let lines = try await h.run("""
            local sustained = alert.define {
              id = "sustained-low", series = series, when = alert.sustained(alert.below(70), "15m"), notify = { "phone" },
            }
            local gap = alert.define { id = "no-data", series = function() return nil end, when = alert.below(70), notify = { "phone" } }
            at(0, 65) print(sustained:check(), gap:check())
            at(5, 64) print(sustained:check(), gap:check())
            at(5, 63) print(sustained:check(), gap:check())
            at(5, 62) print(sustained:check(), gap:check())
            """)
        // One low reading is not "low for 15 minutes": unknown, silent, until the window is covered.
        // No data at all is "stale" at once but says so only after the stale window.
        XCTAssertEqual(lines, ["unknown\tstale", "unknown\tstale", "unknown\tstale", "firing\tstale"])
        XCTAssertEqual(h.notifications, ["phone firing warning sustained-low", "phone stale warning no-data"])
    }

    func testHysteresisRateOfChangeAndComposites() async throws {
        let h = try AlertHarness()
        let lines = try await h.run("""
            local low = alert.define { id = "low", series = series, when = alert.below(55), clear = alert.above(70) }
            local dropping = alert.define {
              id = "dropping", series = series, when = alert.all { alert.below(150), alert.falling(2, "5m") },
            }
            local either = alert.define { id = "either", series = series, when = alert.any { alert.above(250), alert.none { alert.above(60) } } }
            local out = {}
            for _, step in ipairs { {0, 120}, {5, 105}, {5, 90}, {5, 54}, {5, 60}, {5, 69}, {5, 71} } do
              at(step[1], step[2])
              out[#out + 1] = table.concat({ low:check(), dropping:check(), either:check() }, "/")
            end
            print(table.concat(out, " "))
            """)
        XCTAssertEqual(lines, ["ok/unknown/ok ok/firing/ok ok/firing/ok firing/firing/firing firing/ok/firing firing/ok/ok ok/ok/ok"])
    }

    func testHysteresisSurvivesADataGap() async throws {
        let h = try AlertHarness()
        let lines = try await h.run(urgentLow + """
            at(0, 50) print(low:check())
            at(20) print(low:check())        -- no data for 20 minutes
            at(1, 60) print(low:check())     -- back at 60: still under clear (70), so still low
            at(5, 75) print(low:check())
            """)
        XCTAssertEqual(lines, ["firing", "stale", "firing", "ok"])
        XCTAssertEqual(h.notifications.filter { $0.hasPrefix("phone firing") }.count, 2, "\(h.notifications)")
    }

    func testAckFromAnotherProcessStopsRepeatsForThisEpisodeOnly() async throws {
        let h = try AlertHarness()
        _ = try await h.run(urgentLow + "at(0, 100) low:check() at(5, 50) print(low:check())")
        let status = try await AlertAcks(store: h.store).ack(id: "urgent-low", by: "anna", at: h.clock.now)
        XCTAssertEqual(status.ackedBy, "anna")
        XCTAssertEqual(status.episode, 1)
        let lines = try await h.run(urgentLow + """
            at(5, 50) print(low:check(), low:status().acked_by)
            at(5, 50) print(low:check())
            at(10, 80) print(low:check())
            at(5, 50) print(low:check())
            """)
        XCTAssertEqual(lines, ["acked\tanna", "acked", "ok", "firing"])
        XCTAssertEqual(h.notifications, ["phone firing urgent urgent-low", "phone firing urgent urgent-low"],
                       "silent while acknowledged; the next episode notifies again")
        let list = try await AlertAcks(store: h.store).list()
        XCTAssertEqual(list.map(\.id), ["urgent-low"])
        XCTAssertEqual(list.first?.state, "firing")
        XCTAssertNil(list.first?.ackedBy, "the new episode has no acknowledgement")
    }

    func testUrgentAcknowledgementExpires() async throws {
        let h = try AlertHarness()
        let lines = try await h.run(urgentLow + """
            at(0, 50) low:check()
            print(alert.ack("urgent-low", "me").episode)
            at(20, 50) print(low:check())
            at(11, 50) print(low:check())
            """)
        XCTAssertEqual(lines, ["1", "acked", "firing"])
        XCTAssertEqual(h.notifications.first, "phone firing urgent urgent-low")
        XCTAssertEqual(h.notifications.count, 4, "after 30 min the urgent alert notifies again, escalated: \(h.notifications)")
    }

    func testHTTPAckAnswersForTheStatusServer() async throws {
        let h = try AlertHarness()
        let acks = AlertAcks(store: h.store)
        let unknown = await acks.httpAck(id: "urgent-low", by: "web")
        XCTAssertEqual(unknown.status, 404)
        _ = try await h.run(urgentLow + "at(0, 100) low:check()")
        let quiet = await acks.httpAck(id: "urgent-low", by: "web")
        XCTAssertEqual(quiet.status, 409)
        XCTAssertTrue(quiet.json.contains("is not firing"), quiet.json)
        _ = try await h.run(urgentLow + "at(5, 50) low:check()")
        let acked = await acks.httpAck(id: "urgent-low", by: "web")
        XCTAssertEqual(acked.status, 200)
        XCTAssertEqual(acked.json, #"{"acked_by":"web","episode":1,"id":"urgent-low","state":"firing"}"#)
    }

    func testAckErrorsNameTheProblem() async throws {
        let h = try AlertHarness()
        let acks = AlertAcks(store: h.store)
        do {
            try await acks.ack(id: "nope", by: "me")
            XCTFail("acked an unknown alert")
        } catch let error as AlertAckError {
            XCTAssertEqual(error, .unknown("nope", known: []))
        }
        _ = try await h.run(urgentLow + "at(0, 100) low:check() print(select(2, alert.ack('urgent-low')).code)")
        do {
            try await acks.ack(id: "urgent-low", by: "me")
            XCTFail("acked an alert that is ok")
        } catch let error as AlertAckError {
            XCTAssertEqual(error.description, "alert 'urgent-low' is not firing (state: ok); nothing to acknowledge")
        }
    }

    func testStateSurvivesARestartWithoutDuplicateNotifications() async throws {
        let h = try AlertHarness()
        _ = try await h.run(urgentLow + "at(0, 50) print(low:check())")
        XCTAssertEqual(h.notifications.count, 1)
        // A new runtime (a restarted `serve`) with the same database: same episode, nothing resent,
        // the repeat comes when it is due.
        let lines = try await h.run(urgentLow + """
            at(2, 50) print(low:check(), low:status().episode)
            at(3, 50) print(low:check())
            """)
        XCTAssertEqual(lines, ["firing\t1", "firing"])
        XCTAssertEqual(h.notifications, ["phone firing urgent urgent-low", "phone repeat urgent urgent-low"])
        XCTAssertEqual(h.warnings.withLock { $0 }, [], "the same script: no warning")
        _ = try await h.run(urgentLow + "at(1, 50) low:check()", name: "other.lua")
        XCTAssertEqual(h.warnings.withLock { $0 }.first?.contains("has this id from script alerts.lua"), true)
    }

    func testSnoozeOfAnUrgentAlertEndsWithItsEpisode() async throws {
        let h = try AlertHarness()
        let lines = try await h.run(urgentLow + """
            at(0, 100) low:check()
            local ok, err = alert.snooze("urgent-low", "1h")
            print(ok, err.code)
            at(5, 50) low:check()
            print(alert.snooze("urgent-low", "1h") ~= nil)
            at(5, 50) print(low:check())
            at(5, 90) print(low:check())
            at(5, 50) print(low:check())
            """)
        XCTAssertEqual(lines, ["nil\turgent", "true", "snoozed", "ok", "firing"])
        XCTAssertEqual(h.notifications, ["phone firing urgent urgent-low", "phone firing urgent urgent-low"])
    }

    func testWarningInQuietHoursIsHeldNotLost() async throws {
        let h = try AlertHarness()
        // Quiet from 11:00 to 12:30; the clock starts at 12:00.
        let lines = try await h.run("""
            local high = alert.define { id = "high", series = series, when = alert.above(250), notify = { "phone" },
                                        escalate = { { after = "10m", notify = { "partner" } } },
                                        quiet_hours = { from = "11:00", to = "12:30" } }
            at(0, 300) print(high:check())
            at(20, 300) print(high:check())
            at(15, 300) print(high:check())
            at(10, 300) print(high:check())
            """)
        XCTAssertEqual(lines, ["firing", "firing", "firing", "firing"])
        // Sent once quiet hours ended, to the first step only: the ladder starts then.
        XCTAssertEqual(h.notifications, ["phone firing warning high", "partner escalated warning high"])
        XCTAssertEqual(h.log.all.count, 2)
        XCTAssertEqual(h.log.all[0].time, AlertHarness.localNoon().addingTimeInterval(35 * 60))
    }

    func testAnUnconfiguredChannelIsReportedAtDefinitionAndStillRecorded() async throws {
        let h = try AlertHarness()
        _ = try await h.run("""
            local low = alert.define { id = "low", series = series, when = alert.below(55), notify = { "pager" } }
            at(0, 50) low:check()
            """)
        XCTAssertEqual(h.warnings.withLock { $0 }, ["alert low: no [notify.pager] channel is configured; its notifications will fail"])
        XCTAssertEqual(h.notifications, ["pager firing warning low"])
        XCTAssertTrue(h.log.all.first?.details["config_error"]?.contains("no [notify.pager] channel") ?? false)
    }

    func testTimeRoutingNeverLeavesAnAlertSilent() async throws {
        let h = try AlertHarness()
        let lines = try await h.run("""
            local routed = alert.define { id = "routed", severity = "urgent", series = series, when = alert.below(55), notify = {
              { channel = "phone", from = "07:00", to = "23:00" }, { channel = "partner", from = "23:00", to = "07:00" } } }
            local night = alert.define { id = "night-only", series = series, when = alert.below(55),
                                         notify = { { channel = "partner", from = "23:00", to = "07:00" } } }
            at(0, 50) routed:check() night:check()
            print(pcall(alert.define, { id = "x", series = series, when = alert.below(1), notify = { { channel = "phone", from = "7" } } }))
            """)
        // At noon the day route applies; a route list with nothing open now still notifies.
        XCTAssertEqual(h.notifications, ["phone firing urgent routed", "partner firing warning night-only"])
        XCTAssertTrue(lines.first?.contains("opts.notify[1]: give both from and to, or neither") ?? false, "\(lines)")
    }

    func testDefinitionErrorsNameTheOption() async throws {
        let h = try AlertHarness()
        let lines = try await h.run("""
            local function try(opts) local ok, err = pcall(alert.define, opts) print(err) end
            try { id = "a", series = series, when = alert.below(1), colour = "red" }
            try { id = "b", series = series, when = 55 }
            try { id = "c", series = series, when = alert.below(1), stale = "soon" }
            try { id = "d", series = series, when = alert.below(1), severity = "loud" }
            try { id = "bad id", series = series, when = alert.below(1) }
            print(pcall(alert.below, "55"))
            """)
        guard lines.count == 6 else { return XCTFail("\(lines)") }
        XCTAssertTrue(lines[0].contains("unknown option 'colour'"), lines[0])
        XCTAssertTrue(lines[1].contains("opts.when: expected a condition"), lines[1])
        XCTAssertTrue(lines[2].contains("opts.stale: expected a duration"), lines[2])
        XCTAssertTrue(lines[3].contains("opts.severity"), lines[3])
        XCTAssertTrue(lines[4].contains("opts.id"), lines[4])
        XCTAssertTrue(lines[5].contains("bad argument #1 to 'alert.below' (number expected, got string)"), lines[5])
    }

    func testSustainedNeedsContinuousDataAndBadSeriesGoStale() async throws {
        let h = try AlertHarness()
        let lines = try await h.run("""
            local low = alert.define { id = "gappy", series = series, stale = "30m", max_gap = "10m",
                                       when = alert.sustained(alert.below(70), "30m"), notify = { "phone" } }
            local broken = alert.define { id = "broken", series = function() error("site down") end, when = alert.below(70) }
            local future = alert.define { id = "future", series = function() return 40, clock.now() + 3600000 end, when = alert.below(70) }
            at(0, 60) low:check()
            at(15, 60) low:check()                     -- a 15-minute gap inside the window
            at(5, 60) low:check()
            at(10, 60) print(low:check(), broken:check(), future:check())
            at(10, 60) print(low:check())
            at(5, 60) print(low:check())               -- 30 minutes of readings at most 10 minutes apart
            """)
        XCTAssertEqual(lines, ["unknown\tstale\tstale", "unknown", "firing"])
        XCTAssertEqual(h.notifications, ["phone firing warning gappy"])
        let warnings = h.warnings.withLock { $0 }
        XCTAssertTrue(warnings.contains { $0.contains("alert broken: series failed") && $0.contains("site down") }, "\(warnings)")
        XCTAssertTrue(warnings.contains { $0.contains("alert future: ignored a point dated 1 h in the future") }, "\(warnings)")
        let text = try await h.run("""
            local a = alert.define { id = "text", series = function() return "52", clock.now() end, when = alert.below(55) }
            print(a:check(), a:check())
            """)
        XCTAssertEqual(text, ["unknown\tunknown"])
        XCTAssertEqual(h.warnings.withLock { $0 }.filter { $0.contains("series gave a string value") }.count, 1)
    }

    func testACrashBetweenQueuingAndSavingDoesNotNotifyTwice() async throws {
        let (peer, base) = try await NotifyPeer.get()
        let h = try AlertHarness(config: """
            [notify.hook]
            type = "webhook"
            url = "\(base)/alert-crash/hook"
            """, live: true)
        _ = try await h.run(urgentLowFor("crash-low", channel: "hook") + "at(0, 100) print(low:check())")
        let before = try await h.store.alertRecord(id: "crash-low")
        _ = try await h.run(urgentLowFor("crash-low", channel: "hook") + "at(5, 50) print(low:check())")
        // The process dies after queuing the notification and before saving the state: put back the
        // state as it was, and check again at the same time.
        try await h.store.saveAlert(try XCTUnwrap(before?.status), data: try XCTUnwrap(before?.data), now: h.clock.now)
        let lines = try await h.run(urgentLowFor("crash-low", channel: "hook") + "at(0, 50) print(low:check())")
        XCTAssertEqual(lines, ["firing"])
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, try await h.store.notifications(states: [.pending, .sending], limit: 10).count > 0 {
            try await Task.sleep(for: .milliseconds(20))  // polling with a deadline
        }
        let sent = try await h.store.notifications(states: [.sent], limit: 10)
        XCTAssertEqual(sent.map(\.id), ["alert:crash-low:1:1:hook"])
        XCTAssertEqual(peer.requests("/alert-crash/hook").count, 1)
    }

    private func urgentLowFor(_ id: String, channel: String) -> String {
        """
        local low = alert.define { id = "\(id)", severity = "urgent", series = series, when = alert.below(55), notify = { "\(channel)" } }

        """
    }
}
