import AsyncHTTPClient
import Foundation
import LookoutSim
import XCTest
import LookoutWire

/// The simulated receiving Loop app (spec §5.1 "Loop side", §5.2): OTP validation, duplicate and
/// expiry handling, and what it uploads as treatments. Simulators are left running (never
/// stopped), time moves only through the injected clock.
final class LoopAppTests: XCTestCase {
    static let path = "/api/v2/notifications/loop"
    static let secret = NightscoutSimulator.Options.LoopSettings.defaultOTPSecret

    /// A started simulator with a profile carrying `loopSettings`.
    func makeHarness(_ configure: @escaping (inout NightscoutSimulator.Options.LoopSettings) -> Void = { _ in }) async throws
        -> SimHarness
    {
        let h = SimHarness { o in configure(&o.loop) }
        try await h.start()
        let seeded = try await h.request(
            .POST, "/api/v1/profile", headers: h.secretHeader,
            body: ["startDate": "2024-05-01T09:00:00.000Z", "defaultProfile": "Default", "store": ["Default": [:]],
                   "loopSettings": ["deviceToken": "0123abcd", "bundleIdentifier": "com.LOOKOUT01.loopkit.Loop"]])
        XCTAssertEqual(seeded.status, 200, seeded.text)
        return h
    }

    func post(_ h: SimHarness, _ body: JSONValue) async throws -> HTTPResult {
        try await h.request(.POST, Self.path, headers: h.secretHeader, body: body)
    }

    func treatments(_ h: SimHarness) async -> [JSONValue] { await h.sim.documents("treatments") }

    func code(_ h: SimHarness, offset: TimeInterval = 0) -> String {
        LoopOTP.code(base32Secret: Self.secret, at: h.clock.now() + offset)!
    }

    func testBolusWithValidOTPIsEnactedAndReuseIsRefused() async throws {
        let h = try await makeHarness()
        let otp = code(h)
        XCTAssertEqual(h.sim.loopOTPCode(), otp)
        let ok = try await post(h, ["eventType": "Remote Bolus Entry", "remoteBolus": "1.5", "otp": .string(otp)])
        XCTAssertEqual(ok.status, 200)
        XCTAssertEqual(ok.text, "OK")
        var events = await h.sim.loopAppEvents()
        XCTAssertEqual(events.count, 1)
        XCTAssertEqual(events[0].outcome, .enacted)
        XCTAssertEqual(events[0].action, "Bolus Entry 1.5 U")
        XCTAssertEqual(events[0].notificationIndex, 0)
        let dose = try XCTUnwrap(events[0].uploaded)
        XCTAssertEqual(dose["eventType"], "Correction Bolus")
        XCTAssertEqual(dose["insulin"], 1.5)
        XCTAssertEqual(dose["created_at"], "2024-05-01T10:00:00.000Z")
        XCTAssertEqual(dose["enteredBy"], "loop://iPhone")
        var stored = await treatments(h)
        XCTAssertEqual(stored.count, 1)
        XCTAssertEqual(stored[0]["_id"], dose["_id"])

        // Same code 2 s later (same period): already used.
        h.clock.advance(by: 2)
        let again = try await post(h, ["eventType": "Remote Bolus Entry", "remoteBolus": "1.5", "otp": .string(otp)])
        XCTAssertEqual(again.status, 200, "Nightscout forwards; Loop refuses")
        events = await h.sim.loopAppEvents()
        XCTAssertEqual(events.last?.outcome, .failed("Password \(otp) was already used"))
        let note = try XCTUnwrap(events.last?.uploaded)
        XCTAssertEqual(note["eventType"], "Note")
        XCTAssertEqual(note["enteredBy"], "Bolus Entry 1.5 U")
        XCTAssertEqual(note["created_at"], "2024-05-01T10:00:02.000Z")
        let notes = try XCTUnwrap(note["notes"]?.stringValue)
        let lines = notes.split(separator: "\n", maxSplits: 1).map(String.init)
        XCTAssertEqual(lines.first, "Password \(otp) was already used")
        let json = try JSONValue.parse(try XCTUnwrap(lines.last))
        XCTAssertEqual(json["bolus-entry"], 1.5)
        XCTAssertEqual(json["sent-at"], "2024-05-01T10:00:02.000Z")
        stored = await treatments(h)
        XCTAssertEqual(stored.count, 2)
    }

    func testOTPWindowExpiredIncorrectAndMissing() async throws {
        let h = try await makeHarness()
        h.clock.advance(by: 45)  // 10:00:45, mid-period
        // Previous period's code is accepted.
        let previous = code(h, offset: -30)
        _ = try await post(h, ["eventType": "Remote Carbs Entry", "remoteCarbs": "20.0", "remoteAbsorption": "3.0",
                               "otp": .string(previous), "created_at": "2024-05-01T10:00:30.000Z"])
        h.clock.advance(by: 1)
        // Two periods back: expired.
        let old = code(h, offset: -65)
        _ = try await post(h, ["eventType": "Remote Bolus Entry", "remoteBolus": "2", "otp": .string(old)])
        h.clock.advance(by: 1)
        var wrong = "000000"
        let valid = Set((0..<120).map { code(h, offset: -30 * Double($0)) })
        while valid.contains(wrong) { wrong = String(format: "%06d", Int(wrong)! + 1) }
        _ = try await post(h, ["eventType": "Remote Bolus Entry", "remoteBolus": "2", "otp": .string(wrong)])
        h.clock.advance(by: 1)
        _ = try await post(h, ["eventType": "Remote Carbs Entry", "remoteCarbs": "20"])
        h.clock.advance(by: 1)
        _ = try await post(h, ["eventType": "Remote Bolus Entry", "remoteBolus": "2", "otp": "12345"])

        let events = await h.sim.loopAppEvents()
        XCTAssertEqual(events.map(\.outcome), [
            .enacted, .failed("Password \(old) has expired"), .failed("Password \(wrong) is incorrect"),
            .failed("Missing OTP"), .failed("Password 12345 is incorrect"),
        ])
        XCTAssertEqual(events.map(\.action), ["Carb Entry 20 g", "Bolus Entry 2 U", "Bolus Entry 2 U", "Carb Entry 20 g",
                                              "Bolus Entry 2 U"])
        let carbs = try XCTUnwrap(events[0].uploaded)
        XCTAssertEqual(carbs["eventType"], "Carb Correction")
        XCTAssertEqual(carbs["carbs"], 20)
        XCTAssertEqual(carbs["absorptionTime"], 180)
        XCTAssertEqual(carbs["created_at"], "2024-05-01T10:00:30.000Z", "start time as sent")
        let notes = await treatments(h).filter { $0["eventType"] == "Note" }
        XCTAssertEqual(notes.count, 4)
        XCTAssertEqual(notes.map { $0["enteredBy"] }, ["Bolus Entry 2 U", "Bolus Entry 2 U", "Carb Entry 20 g", "Bolus Entry 2 U"])
    }

    func testOverrideNeedsNoOTPAndCancelEndsIt() async throws {
        let h = try await makeHarness()
        _ = try await post(h, ["eventType": "Temporary Override", "reason": "Exercise", "reasonDisplay": "🏃 Exercise",
                               "duration": "60.0", "notes": ""])
        h.clock.advance(by: 600)
        _ = try await post(h, ["eventType": "Temporary Override Cancel", "duration": "0"])
        h.clock.advance(by: 60)
        // Cancel with nothing running: enacted, nothing uploaded.
        _ = try await post(h, ["eventType": "Temporary Override Cancel", "duration": "0"])
        h.clock.advance(by: 60)
        _ = try await post(h, ["eventType": "Temporary Override", "reason": "Sick"])

        let events = await h.sim.loopAppEvents()
        XCTAssertEqual(events.map(\.outcome), [.enacted, .enacted, .enacted, .enacted])
        XCTAssertEqual(events.map(\.action), ["Override Exercise", "Cancel Override", "Cancel Override", "Override Sick"])
        let started = try XCTUnwrap(events[0].uploaded)
        XCTAssertEqual(started["eventType"], "Temporary Override")
        XCTAssertEqual(started["reason"], "Exercise")
        XCTAssertEqual(started["duration"], 60)
        XCTAssertEqual(started["enteredBy"], "Loop (via remote command)")
        XCTAssertNotNil(started["identifier"]?.stringValue.flatMap(UUID.init(uuidString:)), "override UUID")
        let ended = try XCTUnwrap(events[1].uploaded)
        XCTAssertEqual(ended["_id"], started["_id"])
        XCTAssertEqual(ended["duration"], 10, "cut at the cancel time")
        XCTAssertNil(events[2].uploaded)
        let sick = try XCTUnwrap(events[3].uploaded)
        XCTAssertEqual(sick["durationType"], "indefinite")
        XCTAssertNil(sick["duration"])
        let stored = await treatments(h)
        XCTAssertEqual(stored.count, 2)
    }

    func testDuplicateSentAtIsIgnored() async throws {
        let h = try await makeHarness()
        _ = try await post(h, ["eventType": "Temporary Override", "reason": "Exercise"])
        // APNs re-delivery of the same push.
        let redelivered = await h.sim.redeliverLoopPush(0)
        XCTAssertEqual(redelivered?.outcome, .ignoredDuplicate)
        // Quirk: a second command in the same second has the same id (sent-at epoch seconds).
        h.clock.advance(by: 0.5)
        _ = try await post(h, ["eventType": "Temporary Override Cancel", "duration": "0"])
        let events = await h.sim.loopAppEvents()
        XCTAssertEqual(events.map(\.outcome), [.enacted, .ignoredDuplicate, .ignoredDuplicate])
        XCTAssertEqual(events.map(\.notificationIndex), [0, 0, 1])
        let stored = await treatments(h)
        XCTAssertEqual(stored.count, 1)
        XCTAssertEqual(stored[0]["duration"], nil)
        XCTAssertEqual(stored[0]["durationType"], "indefinite")
    }

    func testExpiredPushDisabledAppUnknownPresetAndUnhandled() async throws {
        // The phone gets the push 301 s late: past `expiration` (sent-at + 5 min).
        let late = try await makeHarness { $0.pushDeliveryDelay = 301 }
        _ = try await post(late, ["eventType": "Remote Bolus Entry", "remoteBolus": "1", "otp": .string(code(late))])
        let lateEvents = await late.sim.loopAppEvents()
        XCTAssertEqual(lateEvents.map(\.outcome), [.failed("Expired")])
        XCTAssertEqual(lateEvents.first?.uploaded?["created_at"], "2024-05-01T10:05:01.000Z")
        XCTAssertEqual(lateEvents.first?.uploaded?["enteredBy"], "Bolus Entry 1 U")

        // Phone offline: pushes recorded, nothing enacted.
        let offline = try await makeHarness { $0.enact = false }
        let r = try await post(offline, ["eventType": "Remote Bolus Entry", "remoteBolus": "1", "otp": .string(code(offline))])
        XCTAssertEqual(r.status, 200)
        let offlineEvents = await offline.sim.loopAppEvents()
        XCTAssertEqual(offlineEvents.count, 0)
        let offlinePushes = await offline.sim.receivedLoopNotifications()
        XCTAssertEqual(offlinePushes.count, 1)
        let offlineStored = await treatments(offline)
        XCTAssertEqual(offlineStored.count, 0)

        // Unknown preset; a different secret makes the default-secret code incorrect.
        let presets = try await makeHarness {
            $0.overridePresets = ["Exercise"]
            $0.otpSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
        }
        XCTAssertTrue(presets.sim.options.loop.otpURL.hasSuffix("&secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"))
        _ = try await post(presets, ["eventType": "Temporary Override", "reason": "Party"])
        presets.clock.advance(by: 1)
        let own = LoopOTP.code(base32Secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP", at: presets.clock.now())!
        _ = try await post(presets, ["eventType": "Remote Bolus Entry", "remoteBolus": "0.5", "otp": .string(own)])
        let events = await presets.sim.loopAppEvents()
        XCTAssertEqual(events.map(\.outcome), [.failed("Unknown override preset: Party"), .enacted])
        XCTAssertEqual(events.first?.uploaded?["enteredBy"], "Override Party")
    }
}
