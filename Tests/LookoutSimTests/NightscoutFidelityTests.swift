import AsyncHTTPClient
import Foundation
import LookoutSim
import LookoutWire
import XCTest

/// Edges where the simulator must behave as cgm-remote-monitor 15.0.7 does (issue 17).
final class NightscoutFidelityTests: XCTestCase {
    func testV3UnknownCollectionOrRouteIs404BeforeAuthentication() async throws {
        let h = SimHarness()
        try await h.start()
        for path in ["/api/v3/nosuchcollection", "/api/v3/nosuchcollection/abc", "/api/v3/entries/a/b"] {
            let r = try await h.request(.GET, path)
            XCTAssertEqual(r.status, 404, path)
            XCTAssertEqual(r.json, ["status": 404, "message": "Bad operation or collection"], path)
        }
        let wrongMethod = try await h.request(.DELETE, "/api/v3/entries")
        XCTAssertEqual(wrongMethod.status, 404)
        // A real collection still authenticates first.
        let known = try await h.request(.GET, "/api/v3/entries")
        XCTAssertEqual(known.status, 401)
        XCTAssertEqual(known.json, ["status": 401, "message": "Missing or bad access token or JWT"])
        await h.stop()
    }

    func testV1BadObjectIdAnswersNightscoutsErrorBody() async throws {
        let h = SimHarness()
        try await h.start()
        for col in ["devicestatus", "profile", "food"] {
            let r = try await h.request(.DELETE, "/api/v1/\(col)/not-an-id", headers: h.secretHeader)
            XCTAssertEqual(r.status, 400, col)
            XCTAssertEqual(
                r.json,
                ["status": 400, "message": "Invalid _id format", "description": "Must be 24-character hex string. Got: not-an-id"],
                col)
        }
        let post = try await h.request(.POST, "/api/v1/food", headers: h.secretHeader, body: [["_id": "x1", "name": "apple"]])
        XCTAssertEqual(post.status, 400)
        XCTAssertEqual(
            post.json?["description"], "Must be 24-character hex string or omit for auto-generation. Got: x1")
        let put = try await h.request(.PUT, "/api/v1/profile", headers: h.secretHeader, body: ["_id": "x2", "units": "mg/dl"])
        XCTAssertEqual(put.json?["description"], "Must be 24-character hex string. Got: x2")
        // Treatments take UUIDs (UUID_HANDLING): no 400 there.
        let t = try await h.request(.DELETE, "/api/v1/treatments/not-an-id", headers: h.secretHeader)
        XCTAssertEqual(t.status, 200)
        await h.stop()
    }

    func testPostedStringsAreSanitisedAsNightscoutsPurifier() async throws {
        let h = SimHarness()
        try await h.start()
        let body: JSONValue = [[
            "eventType": "Note", "created_at": "2024-05-01T09:00:00Z",
            "notes": #"<IMG SRC="javascript:alert('XSS')">"#,
            "enteredBy": "<script>alert(1)</script>Nurse <b onclick=\"steal()\">Kim",
            "reason": "BG < 70 & falling", "profile": "Tom & Jerry",
            "extra": ["deep": "<iframe src=\"https://evil\">x</iframe>ok"],
        ]]
        let w = try await h.request(.POST, "/api/v1/treatments", headers: h.secretHeader, body: body)
        XCTAssertEqual(w.status, 200, w.text)
        let r = try await h.request(
            .GET, "/api/v1/treatments.json?find[created_at][$gte]=2024-01-01", headers: h.secretHeader)
        let doc = try XCTUnwrap(r.json?[0])
        XCTAssertEqual(doc["notes"], "<img>")
        XCTAssertEqual(doc["enteredBy"], "Nurse <b>Kim</b>")
        XCTAssertEqual(doc["reason"], "BG &lt; 70 &amp; falling")
        XCTAssertEqual(doc["profile"], "Tom & Jerry", "a string without '<' is left alone")
        XCTAssertEqual(doc["extra"]?["deep"], "ok")
        // Entries and devicestatus are purified too.
        let e = try await h.request(
            .POST, "/api/v1/entries", headers: h.secretHeader,
            body: [["type": "sgv", "sgv": 100, "date": 1_714_557_000_000, "device": "<img src=x onerror=alert(1)>cgm"]])
        XCTAssertEqual(e.json?[0]?["device"], "<img src=\"x\">cgm")
        await h.stop()
    }

    func testLiveReadingsContinueTheFill() async throws {
        let h = SimHarness()
        try await h.start()
        let filled = await h.sim.fill(days: 0.1, seed: 7)
        let lastFilled = try XCTUnwrap(filled.entries.last?["sgv"]?.doubleValue)
        var previous = lastFilled
        for step in 1...3 {
            h.clock.advance(by: 300)
            let made = await h.sim.addLiveReading(at: h.clock.now(), seed: 7)
            let current = try await h.request(.GET, "/api/v1/entries/current.json", headers: h.secretHeader)
            let e = try XCTUnwrap(current.json?[0])
            XCTAssertEqual(e["date"], .int(NSDatesForTests.ms(h.clock.now())), "reading \(step) is the newest")
            XCTAssertEqual(e["sgv"], made["sgv"])
            XCTAssertEqual(e["type"], "sgv")
            let sgv = try XCTUnwrap(e["sgv"]?.doubleValue)
            XCTAssertLessThan(abs(sgv - previous), 25, "continues from the previous reading")
            XCTAssertNotNil(e["direction"]?.stringValue)
            previous = sgv
        }
        let statuses = try await h.request(.GET, "/api/v1/devicestatus.json?count=1", headers: h.secretHeader)
        XCTAssertEqual(statuses.json?[0]?["created_at"], .string(ISO8601.format(epochMilliseconds: NSDatesForTests.ms(h.clock.now()))))
        await h.stop()
    }
}

/// Epoch milliseconds of a date.
enum NSDatesForTests {
    static func ms(_ d: Date) -> Int64 { Int64((d.timeIntervalSince1970 * 1000).rounded()) }
}
