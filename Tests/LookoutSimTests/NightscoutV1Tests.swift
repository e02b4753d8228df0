import AsyncHTTPClient
import Foundation
import LookoutSim
import XCTest
import LookoutWire

final class NightscoutV1Tests: XCTestCase {
    // Simulated now: 2024-05-01T10:00:00Z = 1714557600000.
    let now: Int64 = 1_714_557_600_000

    func testEntriesDefaultsWindowCountAndUpsert() async throws {
        let h = SimHarness()
        try await h.start()
        var batch: [JSONValue] = []
        for i in 0..<15 {
            batch.append(["type": "sgv", "sgv": .int(100 + Int64(i)), "date": .int(now - Int64(i) * 300_000), "direction": "Flat"])
        }
        batch.append(["type": "sgv", "sgv": 50, "date": .int(now - 5 * 86_400_000)])  // older than 4 days
        let post = try await h.request(.POST, "/api/v1/entries", headers: h.secretHeader, body: .array(batch))
        XCTAssertEqual(post.status, 200)
        XCTAssertEqual(post.json?.arrayValue?.count, 16)
        XCTAssertEqual(post.json?.arrayValue?.first?["_id"]?.stringValue?.count, 24)
        XCTAssertEqual(post.json?.arrayValue?.first?["sysTime"], "2024-05-01T10:00:00.000Z")
        let get = try await h.request(.GET, "/api/v1/entries.json", headers: h.secretHeader)
        let arr = try XCTUnwrap(get.json?.arrayValue)
        XCTAssertEqual(arr.count, 10)  // default count
        XCTAssertEqual(arr.first?["sgv"], 100)  // newest first
        let all = try await h.request(.GET, "/api/v1/entries/sgv.json?count=100", headers: h.secretHeader)
        XCTAssertEqual(all.json?.arrayValue?.count, 15)  // silent 4-day window hides the old one
        let old = try await h.request(
            .GET, "/api/v1/entries.json?find[date][$gte]=0&count=100", headers: h.secretHeader)
        XCTAssertEqual(old.json?.arrayValue?.count, 16)
        let ranged = try await h.request(
            .GET, "/api/v1/entries.json?find[sgv][$gte]=110&find[sgv][$lt]=112", headers: h.secretHeader)
        XCTAssertEqual(ranged.json?.arrayValue?.compactMap { $0["sgv"] }, [110, 111])
        // Same sysTime + type → update, not a second doc.
        _ = try await h.request(
            .POST, "/api/v1/entries", headers: h.secretHeader,
            body: ["type": "sgv", "sgv": "199", "date": .int(now), "_id": "9b3b8a4c-1d9e-4a53-9c43-0a3fb0d1e5a2"])
        let cur = try await h.request(.GET, "/api/v1/entries/current.json", headers: h.secretHeader)
        XCTAssertEqual(cur.json?.arrayValue?.count, 1)
        XCTAssertEqual(cur.json?.arrayValue?.first?["sgv"], "199")  // stored as sent
        XCTAssertEqual(cur.json?.arrayValue?.first?["identifier"], "9b3b8a4c-1d9e-4a53-9c43-0a3fb0d1e5a2")
        let total = await h.sim.documents("entries").count
        XCTAssertEqual(total, 16)
        let lm = try XCTUnwrap(get.header("Last-Modified"))
        let nm = try await h.request(.GET, "/api/v1/entries.json", headers: h.secretHeader + [("If-Modified-Since", lm)])
        XCTAssertEqual(nm.status, 304)
        let del = try await h.request(.DELETE, "/api/v1/entries/sgv?find[sgv][$lt]=105", headers: h.secretHeader)
        XCTAssertEqual(del.json, ["acknowledged": true, "deletedCount": 4])
        // v2 mounts v1.
        let v2 = try await h.request(.GET, "/api/v2/entries.json?count=1", headers: h.secretHeader)
        XCTAssertEqual(v2.json?.arrayValue?.count, 1)
        await h.stop()
    }

    func testTreatmentsNormalisationQuirksAndDefaults() async throws {
        let h = SimHarness()
        try await h.start()
        let post = try await h.request(
            .POST, "/api/v1/treatments", headers: h.secretHeader,
            body: [
                ["eventType": "Meal Bolus", "carbs": "20", "insulin": 0, "created_at": "2024-05-01T11:00:00+01:00"],
                ["eventType": "Announcement", "notes": "hello", "created_at": "2024-05-01T09:00:00Z"],
                ["eventType": "Carb Correction", "carbs": 10, "created_at": "2024-05-01T09:00:00.400Z", "_id": "A1B2C3D4-0000-4000-8000-000000000001"],
            ])
        XCTAssertEqual(post.status, 200)
        let docs = try XCTUnwrap(post.json?.arrayValue)
        XCTAssertEqual(docs[0]["created_at"], "2024-05-01T10:00:00.000Z")
        XCTAssertEqual(docs[0]["utcOffset"], 60)
        XCTAssertEqual(docs[0]["carbs"], 20)
        XCTAssertEqual(docs[0]["insulin"], .null)  // removed when 0, read back as null
        XCTAssertEqual(docs[1]["isAnnouncement"], true)
        XCTAssertEqual(docs[2]["identifier"], "A1B2C3D4-0000-4000-8000-000000000001")
        let byUUID = try await h.request(
            .GET, "/api/v1/treatments.json?find[_id]=A1B2C3D4-0000-4000-8000-000000000001", headers: h.secretHeader)
        XCTAssertEqual(byUUID.json?.arrayValue?.count, 1)
        let list = try await h.request(.GET, "/api/v1/treatments.json", headers: h.secretHeader)
        XCTAssertEqual(list.json?.arrayValue?.compactMap { $0["eventType"]?.stringValue },
                       ["Meal Bolus", "Carb Correction", "Announcement"])
        // Same created_at + eventType collapses (pre-identifier key).
        _ = try await h.request(.POST, "/api/v1/treatments", headers: h.secretHeader,
                                body: ["eventType": "Announcement", "notes": "again", "created_at": "2024-05-01T09:00:00Z"])
        let count = await h.sim.documents("treatments").count
        XCTAssertEqual(count, 3)
        let regex = try await h.request(.GET, "/api/v1/treatments.json?find[notes]=/AGAIN/i", headers: h.secretHeader)
        XCTAssertEqual(regex.json?.arrayValue?.count, 1)
        let old = try await h.request(
            .GET, "/api/v1/treatments.json?find[created_at][$gte]=2024-05-01", headers: h.secretHeader)
        XCTAssertEqual(old.json?.arrayValue?.count, 3)
        await h.stop()
    }

    func testDevicestatusProfileAndStatus() async throws {
        let h = SimHarness()
        try await h.start()
        let bad = try await h.request(.POST, "/api/v1/devicestatus", headers: h.secretHeader, body: ["_id": "xyz", "device": "loop"])
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual(bad.json?["message"], "Invalid _id format")
        XCTAssertEqual(bad.json?["description"], "Must be 24-character hex string or omit for auto-generation. Got: xyz")
        let ok = try await h.request(.POST, "/api/v1/devicestatus", headers: h.secretHeader, body: ["device": "loop://iPhone"])
        XCTAssertEqual(ok.json?.arrayValue?.first?["created_at"], "2024-05-01T10:00:00.000Z")
        let ds = try await h.request(.GET, "/api/v1/devicestatus.json", headers: h.secretHeader)
        XCTAssertEqual(ds.json?.arrayValue?.count, 1)
        _ = try await h.request(.POST, "/api/v1/profile", headers: h.secretHeader,
                                body: [["defaultProfile": "Default", "startDate": "2024-05-01T09:00:00Z"],
                                       ["defaultProfile": "New", "startDate": "2024-05-01T09:30:00Z"]])
        let cur = try await h.request(.GET, "/api/v1/profile/current", headers: h.secretHeader)
        XCTAssertEqual(cur.json?["defaultProfile"], "New")
        let st = try await h.request(.GET, "/api/v1/status.json")
        XCTAssertEqual(st.json?["status"], "ok")
        XCTAssertEqual(st.json?["serverTimeEpoch"], .int(now))
        let token = await h.sim.addSubject(name: "reader", roles: ["readable"])
        let authStatus = try await h.request(.GET, "/api/v1/status.json?token=\(token)")
        XCTAssertEqual(authStatus.json?["authorized"]?["sub"], "reader")
        let txt = try await h.request(.GET, "/api/v1/status.txt")
        XCTAssertEqual(txt.text, "STATUS OK")
        await h.sim.clearData()
        let empty = await h.sim.documents("profile")
        XCTAssertTrue(empty.isEmpty)
        let versions = try await h.request(.GET, "/api/versions")
        XCTAssertEqual(versions.json?.arrayValue?.count, 3)
        await h.stop()
    }

    func testV1WritesAbsentWithoutSecretAndV3SeesV1Docs() async throws {
        let h = SimHarness()
        try await h.start()
        let post = try await h.request(.POST, "/api/v1/entries", headers: h.secretHeader,
                                       body: ["type": "sgv", "sgv": 99, "date": .int(now)])
        let oid = try XCTUnwrap(post.json?.arrayValue?.first?["_id"]?.stringValue)
        let auth = try await h.bearer("r", roles: ["readable"])
        let read = try await h.request(.GET, "/api/v3/entries/\(oid)", headers: auth)
        XCTAssertEqual(read.status, 200)
        XCTAssertEqual(read.json?["result"]?["identifier"], .string(oid))
        XCTAssertEqual(read.json?["result"]?["srvModified"], .int(now))
        XCTAssertNil(read.json?["result"]?["_id"])
        let hist = try await h.request(.GET, "/api/v3/entries/history/946684800000", headers: auth)
        XCTAssertEqual(hist.json?["result"], [])
        await h.stop()

        let locked = SimHarness { $0.apiSecret = nil }
        try await locked.start()
        let w = try await locked.request(.POST, "/api/v1/entries", body: ["type": "sgv", "sgv": 99, "date": .int(now)])
        XCTAssertEqual(w.status, 404)
        await locked.stop()
    }
}
