import AsyncHTTPClient
import Foundation
import LookoutSim
import XCTest
import LookoutWire

final class NightscoutLoopAndFaultTests: XCTestCase {
    func testLoopNotificationPreconditionsAndRecording() async throws {
        let h = SimHarness()
        try await h.start()
        let body: JSONValue = ["eventType": "Remote Bolus Entry", "remoteBolus": "1.5", "otp": "287082"]
        let noProfile = try await h.request(.POST, "/api/v2/notifications/loop", headers: h.secretHeader, body: body)
        XCTAssertEqual(noProfile.status, 500)
        XCTAssertEqual(noProfile.text, "Loop notification failed: Could not find loopSettings in profile.")
        XCTAssertEqual(noProfile.header("Content-Type"), "text/html; charset=utf-8")
        _ = try await h.request(
            .POST, "/api/v1/profile", headers: h.secretHeader,
            body: ["startDate": "2024-05-01T09:00:00Z",
                   "loopSettings": ["deviceToken": "abcd", "bundleIdentifier": "com.XXXXXXXXXX.loopkit.Loop"]])
        let ok = try await h.request(.POST, "/api/v2/notifications/loop", headers: h.secretHeader, body: body)
        XCTAssertEqual(ok.status, 200)
        XCTAssertEqual(ok.text, "OK")
        let bad = try await h.request(
            .POST, "/api/v2/notifications/loop", headers: h.secretHeader,
            body: ["eventType": "Remote Carbs Entry", "remoteCarbs": "0"])
        XCTAssertEqual(bad.text, "Loop remote carbs failed. Incorrect carbs entry: ")
        let unhandled = try await h.request(
            .POST, "/api/v2/notifications/loop", headers: h.secretHeader, body: ["eventType": "Dance"])
        XCTAssertEqual(unhandled.text, "Loop notification failed: Unhandled event type:")
        let anon = try await h.request(.POST, "/api/v2/notifications/loop", body: body)
        XCTAssertEqual(anon.status, 401)
        let got = await h.sim.receivedLoopNotifications()
        XCTAssertEqual(got.count, 4)
        XCTAssertEqual(got[1].status, 200)
        XCTAssertEqual(got[1].body["remoteBolus"], "1.5")
        let push = try XCTUnwrap(got[1].push)
        XCTAssertEqual(push.topic, "com.XXXXXXXXXX.loopkit.Loop")
        XCTAssertEqual(push.deviceToken, "abcd")
        XCTAssertEqual(push.payload["bolus-entry"], 1.5)
        XCTAssertEqual(push.payload["otp"], "287082")
        XCTAssertEqual(push.payload["sent-at"], "2024-05-01T10:00:00.000Z")
        XCTAssertEqual(push.payload["expiration"], "2024-05-01T10:05:00.000Z")
        await h.stop()
    }

    func testLoopTeamIdAndAPNsFailureModes() async throws {
        let h = SimHarness { $0.loop = .init(developerTeamID: nil) }
        try await h.start()
        let r = try await h.request(
            .POST, "/api/v2/notifications/loop", headers: h.secretHeader, body: ["eventType": "Temporary Override Cancel"])
        XCTAssertEqual(r.text, "Loop notification failed: LOOP_DEVELOPER_TEAM_ID not set.")
        await h.stop()
        let f = SimHarness { $0.loop = .init(apnsFailure: "BadDeviceToken") }
        try await f.start()
        await f.sim.seed("profile", [["startDate": "2024-05-01T09:00:00Z",
                                      "loopSettings": ["deviceToken": "t", "bundleIdentifier": "b"]]])
        let r2 = try await f.request(
            .POST, "/api/v2/notifications/loop", headers: f.secretHeader,
            body: ["eventType": "Temporary Override", "reason": "Exercise", "reasonDisplay": "Ex", "duration": "60.0"])
        XCTAssertEqual(r2.status, 500)
        XCTAssertEqual(r2.text, "APNs delivery failed: BadDeviceToken")
        let rec = await f.sim.receivedLoopNotifications()
        XCTAssertEqual(rec.first?.push?.payload["override-duration-minutes"], 60)
        await f.stop()
    }

    func testInjectedStatusCountAnd429() async throws {
        let h = SimHarness()
        try await h.start()
        await h.sim.inject(.status(500), count: 2)
        let a = try await h.request(.GET, "/api/v1/entries.json", headers: h.secretHeader)
        let b = try await h.request(.GET, "/api/v1/entries.json", headers: h.secretHeader)
        let c = try await h.request(.GET, "/api/v1/entries.json", headers: h.secretHeader)
        XCTAssertEqual([a.status, b.status, c.status], [500, 500, 200])
        await h.sim.inject(.tooManyRequests(retryAfterSeconds: 7), count: 1, pathPrefix: "/api/v3")
        let v1 = try await h.request(.GET, "/api/v1/entries.json", headers: h.secretHeader)
        XCTAssertEqual(v1.status, 200)
        let v3 = try await h.request(.GET, "/api/v3/version")
        XCTAssertEqual(v3.status, 429)
        XCTAssertEqual(v3.header("Retry-After"), "7")
        let count = await h.sim.injectedFaultCount()
        XCTAssertEqual(count, 3)
        let log = await h.sim.requestLog()
        XCTAssertEqual(log.map(\.status), [500, 500, 200, 200, 429])
        XCTAssertEqual(log.last?.path, "/api/v3/version")
        XCTAssertEqual(log.first?.headers["api-secret"], SimHarness.secretHash)
        await h.stop()
    }

    func testFractionIsDeterministicAndClearable() async throws {
        let h = SimHarness()
        try await h.start()
        func run() async throws -> [Int] {
            await h.sim.inject(.status(503), fraction: 0.5, seed: 7)
            var out: [Int] = []
            for _ in 0..<12 { out.append(try await h.request(.GET, "/api/v3/version").status) }
            await h.sim.clearFaults()
            return out
        }
        let first = try await run()
        let second = try await run()
        XCTAssertEqual(first, second)
        XCTAssertTrue(first.contains(503) && first.contains(200), "\(first)")
        let after = try await h.request(.GET, "/api/v3/version")
        XCTAssertEqual(after.status, 200)
        await h.stop()
    }

    func testTruncatedAndSlowAndLatency() async throws {
        let h = SimHarness()
        try await h.start()
        await h.sim.inject(.truncated, count: 1)
        do {
            let r = try await h.request(.GET, "/api/v3/version")
            XCTAssertLessThan(r.body.count, 60, "expected a truncated body, got \(r.text)")
        } catch {
            // the connection closed early: what a client should see
        }
        await h.sim.inject(.slow(chunkSize: 8, delay: .milliseconds(1)), count: 1)
        let slow = try await h.request(.GET, "/api/v3/version")
        XCTAssertEqual(slow.status, 200)
        XCTAssertEqual(slow.json?["result"]?["version"], "15.0.7")
        await h.sim.inject(.latency(.milliseconds(1)), count: 1)
        let lat = try await h.request(.GET, "/api/v3/version")
        XCTAssertEqual(lat.status, 200)
        await h.stop()
    }
}
