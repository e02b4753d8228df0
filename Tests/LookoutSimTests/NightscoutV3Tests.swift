import AsyncHTTPClient
import Foundation
import LookoutSim
import XCTest
import LookoutWire

final class NightscoutV3Tests: XCTestCase {
    func testIdentifierVectors() {
        XCTAssertEqual(
            NightscoutSimulator.v3Identifier(
                device: "Samsung XCover 4-861536030196001", date: 1_613_057_404_186, eventType: "Correction Bolus"),
            "5b0f7124-475f-5db0-824c-a73c5eea0975")
        XCTAssertEqual(
            NightscoutSimulator.v3Identifier(device: nil, date: 1_613_057_404_186, eventType: nil),
            "8430907c-30e4-573c-a1f0-3c5ff95a5411")
    }

    func testVersionNeedsNoAuthAndUnknownCollectionIs404() async throws {
        let h = SimHarness()
        try await h.start()
        let v = try await h.request(.GET, "/api/v3/version")
        XCTAssertEqual(v.status, 200)
        XCTAssertEqual(v.json?["result"]?["apiVersion"], "3.0.3-alpha")
        XCTAssertEqual(v.json?["result"]?["storage"]?["storage"], "mongodb")
        let auth = try await h.bearer("admin", roles: ["admin"])
        let nf = try await h.request(.GET, "/api/v3/nothing", headers: auth)
        XCTAssertEqual(nf.status, 404)
        XCTAssertEqual(nf.json, ["status": 404, "message": "Bad operation or collection"])
        let status = try await h.request(.GET, "/api/v3/status", headers: auth)
        XCTAssertEqual(status.json?["result"]?["apiPermissions"]?["entries"], "crud")
        let csv = try await h.request(.GET, "/api/v3/entries", headers: auth + [("Accept", "text/plain")])
        XCTAssertEqual(csv.status, 406)
        XCTAssertEqual(csv.json, ["status": 406, "message": "Unsupported output format requested"])
        await h.stop()
    }

    func testCreateDedupAndValidation() async throws {
        let h = SimHarness()
        try await h.start()
        let auth = try await h.bearer("uploader", roles: ["admin"])
        let doc: JSONValue = [
            "date": 1_613_057_404_186, "app": "AndroidAPS", "device": "Samsung XCover 4-861536030196001",
            "eventType": "Correction Bolus", "insulin": 0.3,
        ]
        let c = try await h.request(.POST, "/api/v3/treatments", headers: auth, body: doc)
        XCTAssertEqual(c.status, 201)
        XCTAssertEqual(c.json?["identifier"], "5b0f7124-475f-5db0-824c-a73c5eea0975")
        XCTAssertEqual(c.json?["lastModified"], .int(1_714_557_600_000))
        XCTAssertEqual(c.header("Location"), "/api/v3/treatments/5b0f7124-475f-5db0-824c-a73c5eea0975")
        XCTAssertEqual(c.header("Last-Modified"), "Wed, 01 May 2024 10:00:00 GMT")
        h.clock.advance(by: 1)
        let d = try await h.request(.POST, "/api/v3/treatments", headers: auth, body: doc)
        XCTAssertEqual(d.status, 200)
        XCTAssertEqual(
            d.json,
            ["status": 200, "lastModified": .int(1_714_557_601_000),
             "identifier": "5b0f7124-475f-5db0-824c-a73c5eea0975", "isDeduplication": true])
        // Dedup needs update permission.
        let creator = try await h.bearer("careportal", roles: ["careportal"])
        let noUpdate = try await h.request(.POST, "/api/v3/treatments", headers: creator, body: doc)
        XCTAssertEqual(noUpdate.json, ["status": 403, "message": "Missing permission api:treatments:update"])
        // Fallback dedup of a v1 doc: created_at + eventType.
        await h.sim.seed("treatments", [["_id": "5c5a2404e0196f4d3d9a718a", "created_at": "2024-05-01T09:00:00.000Z",
                                         "eventType": "Note", "utcOffset": 0, "date": 1_714_554_000_000, "app": "v1"]])
        let fb = try await h.request(
            .POST, "/api/v3/treatments", headers: auth,
            body: ["created_at": "2024-05-01T09:00:00.000Z", "eventType": "Note", "app": "v1"])
        XCTAssertEqual(fb.status, 200)
        XCTAssertEqual(fb.json?["deduplicatedIdentifier"], "5c5a2404e0196f4d3d9a718a")
        // Validation messages.
        let cases: [(JSONValue?, String?, Int, String)] = [
            ([:], nil, 400, "Bad or missing request body"),
            ([["date": 1]], nil, 400, "Bad or missing date field"),
            (["app": "x"], nil, 400, "Bad or missing date field"),
            (["date": 1_613_057_404_186], nil, 400, "Bad or missing app field"),
            (["date": 1_613_057_404_186, "app": "x", "utcOffset": 5000], nil, 400, "Bad or missing utcOffset field"),
            (["date": 1_613_057_404_186, "app": "x", "identifier": 5], nil, 400, "Bad or missing identifier field"),
            (nil, "{not json", 500, "Internal Server Error"),
        ]
        for (body, raw, status, message) in cases {
            let r = try await h.request(.POST, "/api/v3/entries", headers: auth, body: body, rawBody: raw)
            XCTAssertEqual(r.status, status, message)
            XCTAssertEqual(r.json, ["status": .int(Int64(status)), "message": .string(message)])
        }
        await h.stop()
    }

    func testReadUpdatePatchDeleteLifecycle() async throws {
        let h = SimHarness()
        try await h.start()
        let auth = try await h.bearer("admin", roles: ["admin"])
        let c = try await h.request(
            .POST, "/api/v3/entries", headers: auth,
            body: ["date": 1_714_557_600_000, "app": "MySDK", "device": "sim", "type": "sgv", "sgv": 120])
        let id = try XCTUnwrap(c.json?["identifier"]?.stringValue)
        let r = try await h.request(.GET, "/api/v3/entries/\(id)?fields=sgv,date", headers: auth)
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.json, ["status": 200, "result": ["sgv": 120, "date": 1_714_557_600_000]])
        let lm = try XCTUnwrap(r.header("Last-Modified"))
        let notModified = try await h.request(.GET, "/api/v3/entries/\(id)", headers: auth + [("If-Modified-Since", lm)])
        XCTAssertEqual(notModified.status, 304)
        XCTAssertTrue(notModified.body.isEmpty)
        // PUT with a stale If-Unmodified-Since → 412.
        h.clock.advance(by: 10)
        let put1 = try await h.request(
            .PUT, "/api/v3/entries/\(id)", headers: auth,
            body: ["date": 1_714_557_600_000, "app": "MySDK", "device": "sim", "type": "sgv", "sgv": 121])
        XCTAssertEqual(put1.status, 200)
        XCTAssertEqual(put1.json, ["status": 200, "lastModified": .int(1_714_557_610_000)])
        let stale = try await h.request(
            .PUT, "/api/v3/entries/\(id)", headers: auth + [("If-Unmodified-Since", lm)],
            body: ["date": 1_714_557_600_000, "app": "MySDK", "device": "sim", "type": "sgv", "sgv": 122])
        XCTAssertEqual(stale.status, 412)
        XCTAssertEqual(stale.json, ["status": 412])
        let immut = try await h.request(
            .PATCH, "/api/v3/entries/\(id)", headers: auth, body: ["device": "other"])
        XCTAssertEqual(immut.json, ["status": 400, "message": "Field device cannot be modified by the client"])
        let patch = try await h.request(.PATCH, "/api/v3/entries/\(id)", headers: auth, body: ["sgv": 130])
        XCTAssertEqual(patch.json, ["status": 200])
        let missing = try await h.request(.PATCH, "/api/v3/entries/nope", headers: auth, body: ["sgv": 1])
        XCTAssertEqual(missing.json, ["status": 404])
        // PUT insert → 201 with the doubled Location quirk.
        let ins = try await h.request(
            .PUT, "/api/v3/entries/abc", headers: auth,
            body: ["date": 1_714_557_600_001, "app": "MySDK", "type": "sgv", "sgv": 90])
        XCTAssertEqual(ins.status, 201)
        XCTAssertEqual(ins.header("Location"), "/api/v3/entries/abc/abc")
        // Read-only → 422.
        _ = try await h.request(.PATCH, "/api/v3/entries/abc", headers: auth, body: ["isReadOnly": true])
        let ro = try await h.request(.DELETE, "/api/v3/entries/abc", headers: auth)
        XCTAssertEqual(ro.json, ["status": 422, "message": "Trying to modify read-only document"])
        // Soft delete → 410, permanent → 404.
        let del = try await h.request(.DELETE, "/api/v3/entries/\(id)", headers: auth)
        XCTAssertEqual(del.json, ["status": 200])
        let gone = try await h.request(.GET, "/api/v3/entries/\(id)", headers: auth)
        XCTAssertEqual(gone.status, 410)
        XCTAssertEqual(gone.json, ["status": 410])
        let putGone = try await h.request(
            .PUT, "/api/v3/entries/\(id)", headers: auth,
            body: ["date": 1_714_557_600_000, "app": "MySDK", "device": "sim", "type": "sgv", "sgv": 1])
        XCTAssertEqual(putGone.status, 410)
        let perm = try await h.request(.DELETE, "/api/v3/entries/\(id)?permanent=true", headers: auth)
        XCTAssertEqual(perm.status, 200)
        let nf = try await h.request(.GET, "/api/v3/entries/\(id)", headers: auth)
        XCTAssertEqual(nf.status, 404)
        XCTAssertEqual(nf.json, ["status": 404])
        await h.stop()
    }

    func testPermissionSplitOnPutAndPatchAndDelete() async throws {
        let h = SimHarness { $0.roles = ["updater": ["api:entries:update", "api:entries:read"]] }
        try await h.start()
        let admin = try await h.bearer("admin", roles: ["admin"])
        let updater = try await h.bearer("upd", roles: ["updater"])
        let body: JSONValue = ["date": 1_714_557_600_000, "app": "t", "type": "sgv", "sgv": 1]
        let insert = try await h.request(.PUT, "/api/v3/entries/x1", headers: updater, body: body)
        XCTAssertEqual(insert.json, ["status": 403, "message": "Missing permission api:entries:create"])
        _ = try await h.request(.PUT, "/api/v3/entries/x1", headers: admin, body: body)
        let replace = try await h.request(.PUT, "/api/v3/entries/x1", headers: updater, body: body)
        XCTAssertEqual(replace.status, 200)
        let del = try await h.request(.DELETE, "/api/v3/entries/x1", headers: updater)
        XCTAssertEqual(del.json, ["status": 403, "message": "Missing permission api:entries:delete"])
        let emptyPatch = try await h.request(.PATCH, "/api/v3/entries/x1", headers: updater, body: [:])
        XCTAssertEqual(emptyPatch.json, ["status": 400, "message": "Bad or missing request body"])
        _ = try await h.request(.DELETE, "/api/v3/entries/x1", headers: admin)
        let patchGone = try await h.request(.PATCH, "/api/v3/entries/x1", headers: updater, body: ["sgv": 2])
        XCTAssertEqual(patchGone.json, ["status": 410])
        // Resurrection by create with the same identifier.
        let again = try await h.request(
            .POST, "/api/v3/entries", headers: admin,
            body: ["identifier": "x1", "date": 1_714_557_600_000, "app": "t", "type": "sgv", "sgv": 3])
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(again.json?["isDeduplication"], true)
        let read = try await h.request(.GET, "/api/v3/entries/x1", headers: admin)
        XCTAssertEqual(read.json?["result"]?["sgv"], 3)
        XCTAssertEqual(read.json?["result"]?["subject"], "admin")
        await h.stop()
    }

    func testSearchOperatorsSortFieldsLimitSkip() async throws {
        let h = SimHarness()
        try await h.start()
        let auth = try await h.bearer("admin", roles: ["admin"])
        for (i, sgv) in [100, 130, 116, 124].enumerated() {
            let r = try await h.request(
                .POST, "/api/v3/entries", headers: auth,
                body: ["date": .int(1_613_000_000_000 + Int64(i) * 300_000), "app": "t", "device": "d", "type": "sgv",
                       "sgv": .int(Int64(sgv))])
            XCTAssertEqual(r.status, 201)
        }
        let s = try await h.request(
            .GET, "/api/v3/entries?sort$desc=date&limit=3&fields=date,sgv&date$gte=1613000000000", headers: auth)
        XCTAssertEqual(
            s.json,
            ["status": 200, "result": [["date": 1_613_000_900_000, "sgv": 124], ["date": 1_613_000_600_000, "sgv": 116],
                                       ["date": 1_613_000_300_000, "sgv": 130]]])
        let gt = try await h.request(.GET, "/api/v3/entries?sgv$gt=120&sort=sgv&fields=sgv", headers: auth)
        XCTAssertEqual(gt.json?["result"], [["sgv": 124], ["sgv": 130]])
        let skip = try await h.request(.GET, "/api/v3/entries?sort=sgv&fields=sgv&skip=1&limit=1", headers: auth)
        XCTAssertEqual(skip.json?["result"], [["sgv": 116]])
        let inOp = try await h.request(.GET, "/api/v3/entries?type$in=sgv|mbg&fields=sgv&sort=sgv&limit=1", headers: auth)
        XCTAssertEqual(inOp.json?["result"], [["sgv": 100]])
        let numericIn = try await h.request(.GET, "/api/v3/entries?sgv$in=100|124", headers: auth)
        XCTAssertEqual(numericIn.json?["result"], [])
        let stray = try await h.request(.GET, "/api/v3/entries?_=123", headers: auth)
        XCTAssertEqual(stray.json?["result"], [])
        for (q, msg) in [
            ("limit=0", "Parameter limit out of tolerance"), ("limit=abc", "Parameter limit out of tolerance"),
            ("limit=1001", "Parameter limit out of tolerance"), ("skip=-1", "Parameter skip out of tolerance"),
            ("sort=date&sort$desc=date", "Parameters sort and sort_desc cannot be combined"),
            ("sgv$foo=1", "Unsupported filter operator foo"),
        ] {
            let r = try await h.request(.GET, "/api/v3/entries?\(q)", headers: auth)
            XCTAssertEqual(r.json, ["status": 400, "message": .string(msg)], q)
        }
        await h.stop()
    }

    func testHistoryOrderingIncludesDeletionsAndSkipsV1Docs() async throws {
        let h = SimHarness()
        try await h.start()
        let auth = try await h.bearer("admin", roles: ["admin"])
        var ids: [String] = []
        for i in 0..<3 {
            h.clock.advance(by: 1)
            let r = try await h.request(
                .POST, "/api/v3/treatments", headers: auth,
                body: ["date": .int(1_714_000_000_000 + Int64(i)), "app": "t", "eventType": "Note", "notes": "n"])
            ids.append(r.json!["identifier"]!.stringValue!)
        }
        // v1 write: never appears in history.
        _ = try await h.request(.POST, "/api/v1/treatments", headers: h.secretHeader,
                                body: ["eventType": "Note", "notes": "v1", "created_at": "2024-05-01T10:00:00Z"])
        h.clock.advance(by: 1)
        _ = try await h.request(.DELETE, "/api/v3/treatments/\(ids[0])", headers: auth)
        let hist = try await h.request(.GET, "/api/v3/treatments/history/946684800000", headers: auth)
        XCTAssertEqual(hist.status, 200)
        let result = try XCTUnwrap(hist.json?["result"]?.arrayValue)
        XCTAssertEqual(result.compactMap { $0["identifier"]?.stringValue }, [ids[1], ids[2], ids[0]])
        XCTAssertEqual(result.last?["isValid"], false)
        let maxSM = try XCTUnwrap(result.last?["srvModified"]?.int64Value)
        XCTAssertEqual(hist.header("ETag"), "W/\"\(maxSM)\"")
        XCTAssertEqual(hist.header("Last-Modified"), "Wed, 01 May 2024 10:00:04 GMT")
        let after = try await h.request(.GET, "/api/v3/treatments/history/\(maxSM)", headers: auth)
        XCTAssertEqual(after.json, ["status": 200, "result": []])
        XCTAssertNil(after.header("ETag"))
        let limited = try await h.request(.GET, "/api/v3/treatments/history/946684800000?limit=1", headers: auth)
        XCTAssertEqual(limited.json?["result"]?.arrayValue?.count, 1)
        let zero = try await h.request(.GET, "/api/v3/treatments/history/0", headers: auth)
        XCTAssertEqual(zero.json, ["status": 400, "message": "Bad or missing Last-Modified header/parameter"])
        let header = try await h.request(
            .GET, "/api/v3/treatments/history", headers: auth + [("Last-Modified", "Wed, 01 May 2024 10:00:03 GMT")])
        XCTAssertEqual(header.json?["result"]?.arrayValue?.count, 2)  // inclusive
        let noHeader = try await h.request(.GET, "/api/v3/treatments/history", headers: auth)
        XCTAssertEqual(noHeader.status, 400)
        let lm = try await h.request(.GET, "/api/v3/lastModified", headers: auth)
        XCTAssertEqual(lm.json?["result"]?["collections"]?["treatments"], .int(maxSM))
        XCTAssertNil(lm.json?["result"]?["collections"]?["entries"])
        await h.stop()
    }
}
