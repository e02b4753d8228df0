import Foundation
import XCTest
@testable import NightscoutKit
import class LookoutSim.NightscoutSimulator

/// `JSONValueParser` (strict byte-level JSON → `JSONValue`) and `JSONValueDecoder` (models from a
/// parsed tree), checked against Foundation's `JSONDecoder`, which they replace on the hot path.
final class JSONValueParserTests: XCTestCase {
    private func parse(_ text: String) throws -> JSONValue { try JSONValueParser.parse(text) }

    private func parse(bytes: [UInt8]) throws -> JSONValue { try JSONValueParser.parse(Data(bytes)) }

    /// The error for `text`, failing when it parses.
    private func parseError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSONParseError? {
        parseError(bytes: Array(text.utf8), file: file, line: line)
    }

    private func parseError(bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> JSONParseError? {
        do {
            let v = try JSONValueParser.parse(Data(bytes))
            XCTFail("parsed \(String(decoding: bytes, as: UTF8.self)) as \(v)", file: file, line: line)
            return nil
        } catch let e as JSONParseError {
            return e
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
            return nil
        }
    }

    // MARK: - Parser

    func testScalarsAndNesting() throws {
        XCTAssertEqual(try parse("null"), .null)
        XCTAssertEqual(try parse("true"), .bool(true))
        XCTAssertEqual(try parse("false"), .bool(false))
        XCTAssertEqual(try parse(#""x""#), .string("x"))
        XCTAssertEqual(try parse("[]"), .array([]))
        XCTAssertEqual(try parse("{}"), .object([:]))
        XCTAssertEqual(try parse(#"{"a":[1,{"b":[[],{}],"c":null}],"d":{"e":{"f":"g"}}}"#),
                       .object(["a": .array([.int(1), .object(["b": .array([.array([]), .object([:])]), "c": .null])]),
                                "d": .object(["e": .object(["f": .string("g")])])]))
        XCTAssertEqual(try parse("[[[1],[2,3]],[]]"), .array([.array([.array([.int(1)]), .array([.int(2), .int(3)])]), .array([])]))
    }

    func testWhitespace() throws {
        XCTAssertEqual(try parse(" \t\r\n{ \"a\" :\n[ 1 ,\t2 ] }\r\n "), .object(["a": .array([.int(1), .int(2)])]))
        XCTAssertEqual(try parse("\n 7 \n"), .int(7))
        // Only the four JSON blanks are whitespace.
        XCTAssertNotNil(parseError("\u{0B}1"))
        XCTAssertNotNil(parseError("\u{A0}1"))
    }

    func testEscapes() throws {
        XCTAssertEqual(try parse(#""a\"b\\c\/d\be\ff\ng\rh\ti""#), .string("a\"b\\c/d\u{08}e\u{0C}f\ng\rh\ti"))
        XCTAssertEqual(try parse(#""\u00e9\u00E9 \u20AC \u0000""#), .string("éé € \u{0}"))
        XCTAssertEqual(try parse(#""plain é ünïcode 😀""#), .string("plain é ünïcode 😀"))
        XCTAssertEqual(try parse(#"{"k\u0065y":1}"#), .object(["key": .int(1)]))
    }

    func testSurrogatePairs() throws {
        XCTAssertEqual(try parse(#""\ud83d\ude00""#), .string("😀"))
        XCTAssertEqual(try parse(#""x\uD834\uDD1Ey""#), .string("x𝄞y"))
        XCTAssertEqual(parseError(#""\ud83d""#)?.offset, 1)
        XCTAssertEqual(parseError(#""\ud83dx""#)?.offset, 1)
        XCTAssertEqual(parseError(#""ab\ud83d\u0041""#)?.offset, 3)
        XCTAssertEqual(parseError(#""\ude00""#)?.offset, 1)
        XCTAssertNotNil(parseError(#""\u12""#))
        XCTAssertNotNil(parseError(#""\u12G4""#))
        XCTAssertNotNil(parseError(#""\x""#))
    }

    func testInvalidUTF8() throws {
        // Lone continuation byte, truncated sequence, overlong encoding, surrogate encoded in UTF-8, > U+10FFFF.
        for bad: [UInt8] in [[0x80], [0xC3], [0xE2, 0x82], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF]] {
            let text: [UInt8] = Array(#"["ok","ab"#.utf8) + bad + Array(#"cd"]"#.utf8)
            let e = parseError(bytes: text)
            XCTAssertEqual(e?.offset, 9, "\(bad)")
            XCTAssertTrue(e?.message.contains("UTF-8") == true, "\(String(describing: e))")
        }
        // Also after an escape (slow path).
        XCTAssertNotNil(parseError(bytes: Array(#""\n"#.utf8) + [0xC3] + Array(#"""#.utf8)))
        // Valid multi-byte text passes.
        XCTAssertEqual(try parse(bytes: [0x22, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80, 0x22]), .string("é€😀"))
    }

    func testControlCharactersMustBeEscaped() {
        XCTAssertEqual(parseError("\"a\u{01}b\"")?.offset, 2)
        XCTAssertEqual(parseError("\"a\nb\"")?.offset, 2)
        XCTAssertNotNil(parseError("\"a\\n\tb\""))
    }

    func testIntegersAtInt64Edges() throws {
        XCTAssertEqual(try parse("9223372036854775807"), .int(.max))
        XCTAssertEqual(try parse("-9223372036854775808"), .int(.min))
        XCTAssertEqual(try parse("9223372036854775808"), .double(9_223_372_036_854_775_808))
        XCTAssertEqual(try parse("-9223372036854775809"), .double(-9.223372036854775808e18))
        XCTAssertEqual(try parse("123456789012345678901234567890"), .double(1.2345678901234568e29))
        XCTAssertEqual(try parse("0"), .int(0))
        XCTAssertEqual(try parse("-0"), .int(0))
        XCTAssertEqual(try parse("1714557600000"), .int(1_714_557_600_000))
    }

    func testExponentAndFractionForms() throws {
        XCTAssertEqual(try parse("1e3"), .int(1000))
        XCTAssertEqual(try parse("1E+2"), .int(100))
        XCTAssertEqual(try parse("2.50e1"), .int(25))
        XCTAssertEqual(try parse("0.1e1"), .int(1))
        XCTAssertEqual(try parse("100e-2"), .int(1))
        XCTAssertEqual(try parse("1.0"), .int(1))
        XCTAssertEqual(try parse("-0.0"), .int(0))
        XCTAssertEqual(try parse("1.5"), .double(1.5))
        XCTAssertEqual(try parse("-1.5e-3"), .double(-0.0015))
        XCTAssertEqual(try parse("1e300"), .double(1e300))
        XCTAssertEqual(try parse("4.9e-324"), .double(.leastNonzeroMagnitude))
        XCTAssertEqual(try parse("0.30000000000000004"), .double(0.30000000000000004))
    }

    /// Digits beyond 64 bits become correctly rounded doubles; an exponent longer than the parser
    /// keeps (cancelled by a fraction as long) must not be cut short into a wrong integer.
    func testNumbersBeyond64BitsAndLongExponents() throws {
        XCTAssertEqual(try parse("18446744073709551616"), .double(18446744073709551616.0))
        XCTAssertEqual(try parse("1" + String(repeating: "0", count: 64)), .double(1e64))
        XCTAssertEqual(try parse("1844674407370955161.6e-17"), .double(18.446744073709551616))
        let zeros = String(repeating: "0", count: 999_999)
        XCTAssertEqual(try parse("0." + zeros + "1e1000005"), .int(100_000))
        XCTAssertEqual(try parse("0." + zeros + "15e1000001"), .int(15))
    }

    func testInvalidNumbers() {
        for text in ["01", "-01", "1.", ".5", "-", "+1", "1e", "1e+", "1.e3", "--1", "1e400", "-1e400", "0x10", "NaN", "Infinity"] {
            XCTAssertNotNil(parseError(text), text)
        }
        XCTAssertEqual(parseError("[1,01]")?.offset, 3)
    }

    func testTrailingGarbageAndStructureErrors() {
        XCTAssertEqual(parseError("[1] x")?.offset, 4)
        XCTAssertEqual(parseError("{} {}")?.offset, 3)
        XCTAssertEqual(parseError("nul")?.offset, 0)
        XCTAssertEqual(parseError("[tru]")?.offset, 1)
        XCTAssertNotNil(parseError(""))
        XCTAssertNotNil(parseError("   "))
        XCTAssertNotNil(parseError("[1,]"))
        XCTAssertNotNil(parseError("[1 2]"))
        XCTAssertNotNil(parseError(#"{"a":1,}"#))
        XCTAssertNotNil(parseError(#"{"a" 1}"#))
        XCTAssertNotNil(parseError(#"{a:1}"#))
        XCTAssertNotNil(parseError(#"{"a":1"#))
        XCTAssertNotNil(parseError(#"["abc"#))
        XCTAssertNotNil(parseError("\u{FEFF}1"))  // no BOM
        XCTAssertEqual(parseError("[1] x")?.description, "JSON parse error at byte 4: unexpected data after the JSON value")
    }

    func testDepthLimit() throws {
        let ok = String(repeating: "[", count: JSONValueParser.maxDepth) + String(repeating: "]", count: JSONValueParser.maxDepth)
        XCTAssertNoThrow(try parse(ok))
        let deep = String(repeating: "[", count: JSONValueParser.maxDepth + 1) + String(repeating: "]", count: JSONValueParser.maxDepth + 1)
        XCTAssertEqual(parseError(deep)?.offset, JSONValueParser.maxDepth)
        let objects = String(repeating: #"{"a":"#, count: JSONValueParser.maxDepth + 1) + "1" + String(repeating: "}", count: JSONValueParser.maxDepth + 1)
        XCTAssertNotNil(parseError(objects))
    }

    func testDuplicateKeysLastWins() throws {
        XCTAssertEqual(try parse(#"{"a":1,"a":2}"#), .object(["a": .int(2)]))
        let strict = try JSONValueParser.parseCheckingExactness(Data(#"{"a":1,"a":2}"#.utf8))
        XCTAssertFalse(strict.exact)
    }

    /// The tree equals what `JSONDecoder` + `JSONValue.init(from:)` builds.
    func testSameTreesAsJSONDecoder() throws {
        let texts = [
            #"{"a":1,"b":-2.5,"c":"x","d":[true,false,null],"e":{"f":1e3,"g":1.0,"h":9223372036854775807}}"#,
            #"[0,-0,0.5,1e-3,12345678901234,-9223372036854775808,9223372036854775808,1.7976931348623157e308]"#,
            #"{"s":"\u00e9\ud83d\ude00\n\t\"","empty":"","nested":[[[{"x":[]}]]]}"#,
            #"[100e-2,2.50e1,0.1e1,123456789012345,1e14,999999999999999.0,1e300,-1.5e-300]"#,
            " [ 1 , 2 ] ",
        ]
        for text in texts {
            let expected = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            let parsed = try JSONValueParser.parseCheckingExactness(Data(text.utf8))
            XCTAssertEqual(parsed.value, expected, text)
            XCTAssertTrue(parsed.exact, text)
        }
    }

    /// Numbers whose `JSONDecoder` reading is not decided by the text alone are flagged, so
    /// response decoding falls back to `JSONDecoder`.
    func testAmbiguousNumbersAreFlagged() throws {
        for text in ["1.0000000000000001", "9223372036854775806.0", "123456789012345678.0", "1e15", "1e18", "1e-400"] {
            let parsed = try JSONValueParser.parseCheckingExactness(Data(text.utf8))
            XCTAssertFalse(parsed.exact, text)
            // The best-effort value still matches JSONDecoder's where it is representable.
            if text == "1e15" || text == "1e18" {
                XCTAssertEqual(parsed.value, try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)), text)
            }
        }
    }

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
            let tree = try JSONValueParser.parse(data)
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
            let fast = try? JSONValueDecoder.decode(Numbers.self, from: JSONValueParser.parse(data))
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
