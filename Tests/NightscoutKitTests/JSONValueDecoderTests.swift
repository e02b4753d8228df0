import Foundation
import XCTest
@testable import NightscoutKit
import class LookoutSim.NightscoutSimulator
import LookoutWire

/// `JSONValueDecoder` (models from a tree `JSONParser` parsed), checked against Foundation's
/// `JSONDecoder`, which it replaces on the hot path.
final class JSONValueDecoderTests: XCTestCase {
    // MARK: - Decoder

    private let entryDocs = [
        #"{"_id":"5c5a2404e0196f4d3d9a718a","sgv":171,"date":1405763055000,"dateString":"2014-07-19T02:44:15.000-07:00","trend":4,"direction":"Flat","device":"dexcom","type":"sgv","utcOffset":-420,"sysTime":"2014-07-19T09:44:15.000Z"}"#,
        #"{"identifier":"a1","type":"sgv","sgv":"120","delta":"-1.5","trend":"4","noise":1,"filtered":123456.0,"unfiltered":12345,"rssi":-90,"date":"1405763055000","srvModified":1714557600200,"srvCreated":1714557600100.7,"isValid":true,"custom":{"k":[1,2,{"z":null}]},"note":null}"#,
        #"{"type":"sgv","sgv":"HIGH","date":1405763055000,"dateString":"Sat Jul 19 2014 02:44:15 GMT-0700","trend":2.5,"noise":null,"uploader":"x"}"#,
        #"{"type":"mbg","mbg":95.5,"dateString":"  2024-05-01 12:00 ","created_at":"Wed, 01 May 2024 12:00:00 GMT","date":1.714557600123e12,"units":"mg/dl","isReadOnly":"true"}"#,
        #"{"type":"cal","slope":1000.5,"intercept":25000,"scale":1,"date":1714557600000,"identifier":"c","subject":"s","modifiedBy":"m","app":"xDrip","utcOffset":"60"}"#,
    ]

    private let treatmentDocs = [
        #"{"_id":"65a1","eventType":"Correction Bolus","insulin":1.5,"created_at":"2024-05-01T12:00:00.000Z","enteredBy":"loop","notes":"n","extraField":[1,"2"]}"#,
        #"{"identifier":"t","eventType":"Meal Bolus","carbs":"30","insulin":"2.25","date":1714557600000,"utcOffset":0,"isValid":false,"srvModified":1714557600200}"#,
        #"{"eventType":"Temp Basal","duration":30,"absolute":0.5,"rate":0.5,"created_at":"2024-05-01T12:00:00+02:00","amount":null}"#,
    ]

    private let deviceStatusDocs = [
        #"{"_id":"65a1b2c3d4e5f60718293a4b","device":"loop://iPhone","created_at":"2024-05-01T12:00:00.000Z","utcOffset":0,"pump":{"clock":"2024-05-01T12:00:00Z","pumpID":"123","reservoir":120.5,"suspended":false},"uploader":{"name":"iPhone","timestamp":"2024-05-01T12:00:00Z","battery":78,"isCharging":true,"model":"15"},"loop":{"name":"Loop","version":"3.4","iob":{"timestamp":"2024-05-01T12:00:00Z","iob":1.25},"predicted":{"startDate":"2024-05-01T12:00:00Z","values":[120,121,122]}},"override":{"active":false},"radioAdapter":{"name":"RileyLink"}}"#,
        #"{"device":"d","uploader":"not an object","created_at":"2024-05-01T12:00:00Z"}"#,
    ]

    /// `JSONValueDecoder` builds exactly the models `JSONDecoder` builds.
    private func assertSameModels<T: Decodable & Equatable>(_ type: T.Type, _ docs: [String],
                                                           file: StaticString = #filePath, line: UInt = #line) throws {
        for doc in docs {
            let data = Data(doc.utf8)
            let expected = try JSONDecoder().decode(T.self, from: data)
            let tree = try JSONParser.parse(data)
            XCTAssertEqual(try JSONValueDecoder.decode(T.self, from: tree), expected, doc, file: file, line: line)
            XCTAssertEqual(try JSONValueDecoding.decode(T.self, from: data), expected, doc, file: file, line: line)
        }
        let array = Data(("[" + docs.joined(separator: ",") + "]").utf8)
        XCTAssertEqual(try JSONValueDecoding.decode([T].self, from: array), try JSONDecoder().decode([T].self, from: array),
                       file: file, line: line)
    }

    func testModelsMatchJSONDecoder() throws {
        try assertSameModels(Entry.self, entryDocs)
        try assertSameModels(Treatment.self, treatmentDocs)
        try assertSameModels(DeviceStatus.self, deviceStatusDocs)
        try assertSameModels(JSONValue.self, entryDocs + treatmentDocs + deviceStatusDocs)
        try assertSameModels(V3WriteResult.self, [#"{"status":201,"identifier":"x","lastModified":1714557600000}"#,
                                                  #"{"status":200,"isDeduplication":true,"deduplicatedIdentifier":"y"}"#])
    }

    func testModelsRoundTripThroughTheDecoder() throws {
        for doc in entryDocs {
            let e = try JSONValueDecoding.decode(Entry.self, from: Data(doc.utf8))
            // Same JSON back (wire forms of dates and unknown fields kept).
            XCTAssertEqual(try jsonTree(e), try jsonTree(JSONDecoder().decode(Entry.self, from: Data(doc.utf8))), doc)
        }
        let lenient = try JSONValueDecoding.decode(Entry.self, from: Data(entryDocs[1].utf8))
        XCTAssertEqual(lenient.sgv, 120)
        XCTAssertEqual(lenient.trend, 4)
        XCTAssertEqual(lenient.date, NightscoutDate(string: "1405763055000"))
        XCTAssertEqual(lenient.extra["custom"], .object(["k": .array([.int(1), .int(2), .object(["z": .null])])]))
        XCTAssertEqual(lenient.extra["note"], .null)
        let odd = try JSONValueDecoding.decode(Entry.self, from: Data(entryDocs[2].utf8))
        XCTAssertNil(odd.sgv)
        XCTAssertEqual(odd.extra["sgv"], .string("HIGH"))
    }

    func testPrimitiveConversionsFollowJSONDecoder() throws {
        struct Numbers: Decodable, Equatable {
            var i: Int?; var i8: Int8?; var u: UInt64?; var d: Double?; var f: Float?; var s: String?; var b: Bool?
        }
        let cases = [
            #"{"i":1,"i8":127,"u":5,"d":1,"f":1.5,"s":"x","b":true}"#,
            #"{"i":1e3,"d":1e300,"f":2}"#,
            #"{"i8":128}"#,  // out of range: error
            #"{"i":1.5}"#,  // not integral: error
            #"{"u":-1}"#,
            #"{"s":1}"#,
            #"{"b":1}"#,
            #"{"d":"1"}"#,
            #"{"i":null,"s":null}"#,
        ]
        for text in cases {
            let data = Data(text.utf8)
            let expected = try? JSONDecoder().decode(Numbers.self, from: data)
            let fast = try? JSONValueDecoder.decode(Numbers.self, from: JSONParser.parse(data))
            XCTAssertEqual(fast, expected, text)
        }
    }

    func testResponseDecodingFallsBackWithJSONDecoderErrors() throws {
        // Malformed bodies and type mismatches report exactly what JSONDecoder reports (and
        // what JSONDecoder accepts beyond strict JSON, e.g. a trailing comma, still decodes).
        for body in [#"{"status":200,"result":[{"sgv":1},]}"#, #"{"status":"200","result":[]}"#, "not json",
                     #"{"status":200,"result":[{"sgv":1}"#, #"{"status":200,"result":{"sgv":1}}"#] {
            let response = NightscoutHTTPResponse(status: 200, body: Data(body.utf8))
            let expected: Result<[Entry], NightscoutError>
            do { expected = .success(try JSONDecoder().decode(V3Envelope<[Entry]>.self, from: response.body).result) } catch {
                expected = .failure(.decoding(String(describing: error)))
            }
            let actual: Result<[Entry], NightscoutError>
            do { actual = .success(try NightscoutResponse.decodeV3([Entry].self, from: response)) } catch {
                actual = .failure(try XCTUnwrap(error as? NightscoutError))
            }
            XCTAssertEqual(actual, expected, body)
        }
        // Inputs the fast parser refuses but JSONDecoder accepts still decode.
        let bom = NightscoutHTTPResponse(status: 200, body: Data("\u{FEFF}{\"status\":200,\"result\":[{\"sgv\":5}]}".utf8))
        XCTAssertEqual(try NightscoutResponse.decodeV3([Entry].self, from: bom).first?.sgv, 5)
        let ambiguous = NightscoutHTTPResponse(status: 200, body: Data(#"{"status":200,"result":[{"sgv":1.0000000000000001}]}"#.utf8))
        XCTAssertEqual(try NightscoutResponse.decodeV3([Entry].self, from: ambiguous).first?.sgv, 1)
    }
}

/// `history` requests the next page from a full page's `ETag` while decoding it; the pages must
/// be exactly those of `historyPage` called one at a time, with nothing lost or repeated where
/// documents share a millisecond at a page boundary.
final class HistoryPrefetchTests: XCTestCase {
    /// Keeps the simulator alive for the process: stopping a server while a (cancelled
    /// prefetch) connection arrives can trap in NIO.
    private actor Keeper {
        var sims: [NightscoutSimulator] = []
        func keep(_ sim: NightscoutSimulator) { sims.append(sim) }
    }
    private static let keeper = Keeper()

    func testPrefetchedHistoryMatchesPageByPage() async throws {
        let sim = NightscoutSimulator(options: .init(authFailDelay: .zero, api3MaxLimit: 1000))
        let base = try await sim.start()
        await Self.keeper.keep(sim)
        do {
            let token = await sim.addSubject(name: "prefetch", roles: ["readable"])
            let t0: Int64 = 1_714_557_600_000
            // 5 singles, a group of 4 at one millisecond across the first page boundary (limit 7),
            // 6 singles, a group of 3, then 4 singles: 22 documents.
            var times: [Int64] = (0..<5).map { t0 + $0 }
            times += Array(repeating: t0 + 100, count: 4)
            times += (0..<6).map { t0 + 200 + $0 }
            times += Array(repeating: t0 + 300, count: 3)
            times += (0..<4).map { t0 + 400 + $0 }
            // (The simulator's own JSON type, inferred from `seed`.)
            await sim.seed("entries", times.enumerated().map { i, t in
                .object(["identifier": .string("doc-\(i)"), "type": "sgv", "sgv": .int(Int64(100 + i)), "date": .int(t),
                         "srvCreated": .int(t), "srvModified": .int(t)])
            })
            let config = try NightscoutConfiguration(siteURL: base, credentials: .accessToken(token))
            let client = NightscoutClient(configuration: config, authenticationFailureDelay: 0)

            for limit in [3, 5, 7, 22, 1000] {
                var streamed: [V3HistoryPage<Entry>] = []
                for try await page in client.history(Entry.self, .entries, limit: limit) { streamed.append(page) }
                var stepped: [V3HistoryPage<Entry>] = []
                var cursor = HistoryCursor()
                while true {
                    let page = try await client.historyPage(Entry.self, .entries, since: cursor, limit: limit)
                    stepped.append(page)
                    cursor = page.cursor
                    if !page.hasMore { break }
                }
                XCTAssertEqual(streamed.map(\.documents), stepped.map(\.documents), "limit \(limit)")
                XCTAssertEqual(streamed.map(\.cursor), stepped.map(\.cursor), "limit \(limit)")
                XCTAssertEqual(streamed.map(\.hasMore), stepped.map(\.hasMore), "limit \(limit)")
                // Complete when a shared millisecond holds fewer documents than a page (a cursor limit).
                guard limit > 4 else { continue }
                let ids = streamed.flatMap(\.documents).compactMap(\.common.identifier)
                XCTAssertEqual(ids, (0..<times.count).map { "doc-\($0)" }, "limit \(limit)")
            }
        }
    }
}
