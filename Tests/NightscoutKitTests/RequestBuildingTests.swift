import Foundation
@testable import NightscoutKit
import XCTest

final class ConfigurationTests: XCTestCase {
    func testNormalisesSiteURL() throws {
        let c = try NightscoutConfiguration(site: "https://user:pw@my.site.example/ns/?token=abc#x", credentials: .apiSecret("0123456789abcdef"))
        XCTAssertEqual(c.siteURL.absoluteString, "https://my.site.example/ns")
        XCTAssertEqual(try NightscoutConfiguration(site: "my.site.example").siteURL.absoluteString, "https://my.site.example")
        XCTAssertEqual(try NightscoutConfiguration(site: "HTTP://localhost:1337/").siteURL.absoluteString, "http://localhost:1337")
        XCTAssertThrowsError(try NightscoutConfiguration(site: "ftp://x.example"))
        XCTAssertThrowsError(try NightscoutConfiguration(siteURL: URL(string: "file:///tmp")!))
    }

    func testEffectiveAPI() throws {
        let table: [(NightscoutCredentials, NightscoutAPIVersion, Bool, NightscoutAPIVersion?)] = [
            (.apiSecret("0123456789abcdef"), .v3, true, .v1),
            (.apiSecret("0123456789abcdef"), .v3, false, nil),
            (.accessToken("reader-0123456789abcdef"), .v3, true, .v3),
            (.jwt("a.b.c"), .v3, false, .v3),
            (.none, .v3, true, .v1),
            (.accessToken("reader-0123456789abcdef"), .v1, true, .v1),
        ]
        for (cred, preferred, fallback, expected) in table {
            let c = try NightscoutConfiguration(site: "https://ns.example", credentials: cred, preferredAPI: preferred, allowsV1Fallback: fallback)
            XCTAssertEqual(c.effectiveAPI, expected, "\(cred) \(preferred) \(fallback)")
        }
    }

    func testDescriptionHasNoSecrets() throws {
        let c = try NightscoutConfiguration(site: "https://u:pw@ns.example?secret=zzz", credentials: .apiSecret("this is my long pass phrase"))
        XCTAssertFalse(c.description.contains("this is my long pass phrase"))
        XCTAssertFalse(c.description.contains("pw"))
        XCTAssertFalse(c.description.contains("zzz"))
        XCTAssertTrue(c.description.contains("ns.example"))
    }
}

final class V1QueryTests: XCTestCase {
    let from = Date(timeIntervalSince1970: 1_704_067_200) // 2024-01-01T00:00:00Z
    let through = Date(timeIntervalSince1970: 1_704_153_599.999) // 2024-01-01T23:59:59.999Z

    func config(_ cred: NightscoutCredentials = .apiSecret("this is my long pass phrase")) throws -> NightscoutConfiguration {
        try NightscoutConfiguration(site: "https://ns.example/sub", credentials: cred)
    }

    func testEntriesRequestHasDateBoundsAndCount() throws {
        let q = try V1Query.entries(type: .sgv, from: from, through: through, count: 288)
        XCTAssertEqual(q.queryItems.map(\.0), ["find[date][$gte]", "find[date][$lte]", "find[type]", "count"])
        XCTAssertEqual(q.queryItems.map(\.1), ["1704067200000", "1704153599999", "sgv", "288"])
        let r = q.request(for: try config())
        XCTAssertEqual(r.method, "GET")
        XCTAssertEqual(r.url.absoluteString,
                       "https://ns.example/sub/api/v1/entries.json?find%5Bdate%5D%5B%24gte%5D=1704067200000&find%5Bdate%5D%5B%24lte%5D=1704153599999&find%5Btype%5D=sgv&count=288")
        XCTAssertEqual(r.header("api-secret"), "b723e97aa97846eb92d5264f084b2823f57c4aa1")
        XCTAssertEqual(r.header("accept"), "application/json")
        XCTAssertTrue(r.header("User-Agent")!.contains(NightscoutKit.version))
        XCTAssertFalse(r.description.contains("b723e97aa97846eb92d5264f084b2823f57c4aa1"))
    }

    func testDateFieldPerCollection() throws {
        let table: [(V1Collection, String, String, String)] = [
            (.entries, "/api/v1/entries.json", "find[date][$gte]", "1704067200000"),
            (.treatments, "/api/v1/treatments.json", "find[created_at][$gte]", "2024-01-01T00:00:00.000Z"),
            (.devicestatus, "/api/v1/devicestatus.json", "find[created_at][$gte]", "2024-01-01T00:00:00.000Z"),
            (.profiles, "/api/v1/profiles", "find[startDate][$gte]", "2024-01-01T00:00:00.000Z"),
        ]
        for (collection, path, key, value) in table {
            let q = try V1Query(collection: collection, from: from, count: 10_000)
            XCTAssertEqual(q.queryItems.first?.0, key)
            XCTAssertEqual(q.queryItems.first?.1, value)
            XCTAssertEqual(q.queryItems.last?.0, "count")
            XCTAssertEqual(q.queryItems.last?.1, "10000")
            let r = q.request(for: try config())
            XCTAssertEqual(r.url.path, "/sub" + path)
            // Every query carries a date bound, so the server's 4-day default window never applies.
            XCTAssertTrue(r.url.query!.contains(NightscoutRequest.percentEncode(key)))
        }
    }

    func testTreatmentsFilterAndBearer() throws {
        let q = try V1Query.treatments(eventType: .temporaryOverride, from: from, count: 1000)
        let r = q.request(for: try config(.jwt("aaa.bbb.ccc")))
        XCTAssertEqual(r.url.query,
                       "find%5Bcreated_at%5D%5B%24gte%5D=2024-01-01T00%3A00%3A00.000Z&find%5BeventType%5D=Temporary%20Override&count=1000")
        XCTAssertEqual(r.header("Authorization"), "Bearer aaa.bbb.ccc")
        XCTAssertNil(r.header("api-secret"))
        XCTAssertTrue(r.description.contains("Authorization: <redacted>"))
        var dumped = ""
        dump(r, to: &dumped)
        XCTAssertFalse(dumped.contains("aaa.bbb.ccc"), dumped)
    }

    func testValidationAndPaging() throws {
        XCTAssertThrowsError(try V1Query(collection: .entries, from: from, count: 0))
        XCTAssertThrowsError(try V1Query(collection: .entries, from: through, through: from, count: 5))
        let q = try V1Query.entries(from: from, count: 100)
        let oldest = from.addingTimeInterval(3600)
        let next = try XCTUnwrap(q.continuing(before: oldest))
        XCTAssertEqual(next.through, oldest)
        XCTAssertEqual(next.from, from)
        XCTAssertEqual(next.count, 100)
        XCTAssertNil(q.continuing(before: from.addingTimeInterval(-1)))
    }

    func testPercentEncoding() {
        XCTAssertEqual(NightscoutRequest.percentEncode("a b+c/é[$]"), "a%20b%2Bc%2F%C3%A9%5B%24%5D")
        XCTAssertEqual(NightscoutRequest.encodeQuery([("x", "1"), ("y", "a&b")]), "x=1&y=a%26b")
    }
}

final class V3RequestTests: XCTestCase {
    func testSearchRequest() throws {
        let config = try NightscoutConfiguration(site: "http://localhost:1337", credentials: .accessToken("reader-0123456789abcdef"))
        let s = try V3Search(collection: .entries, from: Date(timeIntervalSince1970: 1_613_000_000), limit: 3,
                             filters: [.init("type", .eq, "sgv"), .init("sgv", .gt, "100")], fields: ["date", "sgv", "direction"])
        let r = s.request(for: config, jwt: "h.p.s")
        XCTAssertEqual(r.url.absoluteString,
                       "http://localhost:1337/api/v3/entries?date%24gte=1613000000000&type=sgv&sgv%24gt=100&sort%24desc=date&limit=3&fields=date%2Csgv%2Cdirection")
        XCTAssertEqual(r.header("Authorization"), "Bearer h.p.s")
        XCTAssertNil(r.header("api-secret"))
        XCTAssertFalse(r.description.contains("h.p.s"))
    }

    func testSearchValidation() {
        XCTAssertThrowsError(try V3Search(collection: .treatments, limit: 0))
        XCTAssertThrowsError(try V3Search(collection: .treatments, limit: 1001))
        XCTAssertThrowsError(try V3Search(collection: .treatments, limit: 10, skip: -1))
        XCTAssertThrowsError(try V3Search(collection: .treatments, limit: 10, filters: [.init("limit", .eq, "5")]))
        XCTAssertNoThrow(try V3Search(collection: .treatments, limit: 1000, descending: false))
    }

    func testHistoryRequestClampsWatermark() throws {
        let config = try NightscoutConfiguration(site: "https://ns.example", credentials: .jwt("a.b.c"))
        let r0 = try V3History.request(collection: .treatments, after: 0, limit: 500, configuration: config, jwt: "a.b.c")
        XCTAssertEqual(r0.url.absoluteString, "https://ns.example/api/v3/treatments/history/946684800000?limit=500")
        let r1 = try V3History.request(collection: .entries, after: 1_714_557_600_123, limit: 1000, configuration: config, jwt: "a.b.c")
        XCTAssertEqual(r1.url.path, "/api/v3/entries/history/1714557600123")
        XCTAssertThrowsError(try V3History.request(collection: .entries, after: 0, limit: 0, configuration: config, jwt: "x"))
    }
}

final class ResponseAndWriteTests: XCTestCase {
    func response(_ status: Int, _ body: String) -> NightscoutHTTPResponse {
        NightscoutHTTPResponse(status: status, body: Data(body.utf8))
    }

    func testV3EnvelopeAndWriteResults() throws {
        let r = response(200, #"{"status":200,"result":[{"date":1613057128928,"sgv":116,"direction":"FortyFiveDown"},{"date":1613056828239,"sgv":124,"direction":"FortyFiveDown"}]}"#)
        let entries = try NightscoutResponse.decodeV3([Entry].self, from: r)
        XCTAssertEqual(entries.map(\.sgv), [116, 124])
        let created = try NightscoutResponse.decodeV3Write(from: response(201, #"{"status":201,"identifier":"5b0f7124-475f-5db0-824c-a73c5eea0975","lastModified":1613057523148}"#))
        XCTAssertEqual(created, V3WriteResult(status: 201, identifier: "5b0f7124-475f-5db0-824c-a73c5eea0975", lastModified: 1_613_057_523_148))
        XCTAssertTrue(created.wasInserted)
        let dedup = try NightscoutResponse.decodeV3Write(from: response(200, #"{"status":200,"lastModified":1613057523149,"identifier":"new","isDeduplication":true,"deduplicatedIdentifier":"5c5a2404e0196f4d3d9a718a"}"#))
        XCTAssertEqual(dedup.isDeduplication, true)
        XCTAssertEqual(dedup.deduplicatedIdentifier, "5c5a2404e0196f4d3d9a718a")
        XCTAssertFalse(dedup.wasInserted)
    }

    func testErrorsMapped() {
        let table: [(NightscoutHTTPResponse, NightscoutError)] = [
            (response(401, #"{"status":401,"message":"Missing or bad access token or JWT"}"#), .unauthorized(message: "Missing or bad access token or JWT")),
            (response(401, ""), .unauthorized(message: "Unauthorized")),
            (response(403, #"{"status":403,"message":"Missing permission api:treatments:create"}"#),
             .http(status: 403, body: #"{"status":403,"message":"Missing permission api:treatments:create"}"#)),
            (response(410, #"{"status":410}"#), .http(status: 410, body: #"{"status":410}"#)),
        ]
        for (r, expected) in table {
            XCTAssertThrowsError(try NightscoutResponse.decodeV3([Entry].self, from: r)) { XCTAssertEqual($0 as? NightscoutError, expected) }
        }
        XCTAssertThrowsError(try NightscoutResponse.decodeV1([Entry].self, from: response(200, "not json"))) {
            guard case .decoding? = $0 as? NightscoutError else { return XCTFail("\($0)") }
        }
    }

    func testV1WriteRequests() throws {
        let config = try NightscoutConfiguration(site: "https://ns.example", credentials: .apiSecret("this is my long pass phrase"))
        let t = Treatment.sensorStart(sensorID: "s1", startDate: Date(timeIntervalSince1970: 1_714_557_600))
        let post = try V1Write.postTreatments([t], configuration: config)
        XCTAssertEqual(post.method, "POST")
        XCTAssertEqual(post.url.absoluteString, "https://ns.example/api/v1/treatments")
        XCTAssertEqual(post.header("Content-Type"), "application/json")
        XCTAssertEqual(post.header("api-secret"), "b723e97aa97846eb92d5264f084b2823f57c4aa1")
        let body = try JSONDecoder().decode([Treatment].self, from: try XCTUnwrap(post.body))
        XCTAssertEqual(body, [t])
        XCTAssertFalse(String(decoding: post.body!, as: UTF8.self).contains("this is my long pass phrase"))
        XCTAssertEqual(try V1Write.putTreatment(t, configuration: config).method, "PUT")
        XCTAssertEqual(try V1Write.postEntries([], configuration: config).url.path, "/api/v1/entries")
        XCTAssertEqual(try V1Write.postDeviceStatus([], configuration: config).url.path, "/api/v1/devicestatus")
        XCTAssertEqual(try V1Write.postProfiles([], configuration: config).url.path, "/api/v1/profile")
        XCTAssertEqual(try V1Write.deleteTreatment(id: "6568920febd0ec3b8f56f4d8", configuration: config).url.path,
                       "/api/v1/treatments/6568920febd0ec3b8f56f4d8")
        XCTAssertThrowsError(try V1Write.deleteTreatment(id: "*", configuration: config))
    }
}

final class HistoryCursorTests: XCTestCase {
    func doc(_ id: String, _ srv: Int64, valid: Bool = true) -> Treatment {
        Treatment(common: CommonFields(identifier: id, srvModified: NightscoutDate(epochMilliseconds: srv), isValid: valid ? nil : false))
    }

    func testPagesAcrossSharedMillisecond() {
        var cursor = HistoryCursor(watermark: 0)
        XCTAssertEqual(cursor.watermark, V3History.beginningOfTime)
        XCTAssertEqual(cursor.requestValue, V3History.beginningOfTime)
        let base: Int64 = 1_714_557_600_000
        // Page 1 cut in the middle of two docs at base+2.
        let p1 = cursor.accept([doc("a", base), doc("b", base + 1), doc("c", base + 2)])
        XCTAssertEqual(p1.map(\.common.identifier), ["a", "b", "c"])
        XCTAssertEqual(cursor.watermark, base + 2)
        XCTAssertEqual(cursor.requestValue, base + 1)
        XCTAssertTrue(HistoryCursor.hasMore(pageCount: 3, limit: 3))
        // Page 2 (requested from base+1) repeats c, brings d at the same ms and a deletion.
        let p2 = cursor.accept([doc("c", base + 2), doc("d", base + 2), doc("a", base + 5, valid: false)])
        XCTAssertEqual(p2.map(\.common.identifier), ["d", "a"])
        XCTAssertTrue(p2[1].isDeleted)
        XCTAssertEqual(cursor.watermark, base + 5)
        XCTAssertFalse(HistoryCursor.hasMore(pageCount: 3, limit: 1000))
        // Stale docs are dropped.
        XCTAssertTrue(cursor.accept([doc("b", base + 1)]).isEmpty)
    }

    func testCursorIsCodable() throws {
        var cursor = HistoryCursor()
        _ = cursor.accept([doc("x", 1_714_557_600_000)])
        let copy = try JSONDecoder().decode(HistoryCursor.self, from: JSONEncoder().encode(cursor))
        XCTAssertEqual(copy, cursor)
    }
}
