import Foundation
import XCTest
@testable import NightscoutKit
import struct LookoutSim.CGMGenerator
import LookoutWire

/// The single-pass decoder of v3 pages (`V3PageScanner`, `Entry.scan`) against the tree path it
/// replaces on the hot path (`JSONParser` tree + `DocumentReader`): the same entries, with the
/// same wire forms and unknown fields, for generated and odd inputs; the tree path (and its
/// errors) for everything the single pass refuses.
final class DocumentScannerTests: XCTestCase {
    /// A v3 envelope around `documents` (JSON object texts).
    private func page(_ documents: [String]) -> NightscoutHTTPResponse {
        NightscoutHTTPResponse(status: 200, body: Data((#"{"status":200,"result":["# + documents.joined(separator: ",") + "]}").utf8))
    }

    /// `JSONValue` equality that also tells `.int` from `.double` (`==` compares numbers by value).
    private func identical(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
        case (.object(let x), .object(let y)):
            return x.count == y.count && x.allSatisfy { k, v in y[k].map { identical(v, $0) } ?? false }
        case (.int, _), (.double, _), (.array, _), (.object, _): return false
        default: return a == b
        }
    }

    /// The single pass decodes `documents` (`scanned`: without falling back) to exactly the entries
    /// the tree path decodes, and they encode back to the same JSON.
    private func assertSameEntries(_ documents: [String], scanned: Bool = true,
                                   file: StaticString = #filePath, line: UInt = #line) throws {
        let response = page(documents)
        let tree = try NightscoutResponse.decodeV3Documents(Entry.self, from: response, singlePass: false)
        let single = try NightscoutResponse.decodeV3Documents(Entry.self, from: response)
        let direct = V3PageScanner.documents(Entry.self, from: response.body)
        XCTAssertEqual(direct != nil, scanned, "single pass taken", file: file, line: line)
        XCTAssertEqual(single, tree, file: file, line: line)
        XCTAssertEqual(single.count, documents.count, file: file, line: line)
        for (s, t) in zip(single, tree) {
            XCTAssertTrue(identical(.object(s.extra), .object(t.extra)), "extra \(s.extra) vs \(t.extra)", file: file, line: line)
            XCTAssertTrue(identical(try jsonTree(s), try jsonTree(t)), "encoded", file: file, line: line)
            XCTAssertEqual(s.dateString?.wireForm, t.dateString?.wireForm, file: file, line: line)
            XCTAssertEqual(s.common.date?.wireForm, t.common.date?.wireForm, file: file, line: line)
        }
    }

    func testGeneratedEntriesMatchTheTreePath() throws {
        let end = Date(timeIntervalSince1970: 1_714_557_600)
        let entries = CGMGenerator(seed: 7, end: end).generate(days: 2).entries
        XCTAssertGreaterThan(entries.count, 500)
        // As a v3 HISTORY page carries them: with identifier and server times.
        let docs = entries.enumerated().map { i, e -> String in
            guard case .object(var o) = e else { return e.jsonString }
            o["identifier"] = .string("id-\(i)")
            o["srvModified"] = .int(1_714_557_600_000 + Int64(i))
            o["srvCreated"] = .int(1_714_557_600_000 + Int64(i))
            o["isValid"] = .bool(true)
            return JSONValue.object(o).jsonString
        }
        try assertSameEntries(docs)
    }

    func testOddEntriesMatchTheTreePath() throws {
        let odd = [
            // Unknown fields, nested and null; known fields null (kept in extra).
            #"{"sgv":120,"custom":{"k":[1,2.5,{"z":null}]},"note":null,"trend":null,"date":null,"isValid":null,"units":null}"#,
            // Numbers as floats, integral and not; numbers as strings; blank strings.
            #"{"sgv":120.0,"trend":4.0,"noise":1.5,"utcOffset":-60.0,"rssi":"-90","delta":"-1.5","filtered":" 12 ","mbg":"  ","unfiltered":"x"}"#,
            #"{"sgv":1e2,"trend":"4","date":1.714557600123e12,"srvModified":"1714557600200","srvCreated":1714557600100.7}"#,
            // Missing fields, an empty object.
            #"{}"#, #"{"type":"mbg"}"#, #"{"type":"mbg","mbg":95.5,"units":"mg/dl","created_at":"2024-05-01T12:00:00+02:00"}"#,
            // Escaped strings in values and names; names outside ASCII.
            #"{"s\u0067v":99,"dateString":"2024-05-01T12:00:00\u002e000Z","device":"a\"b\\c\/d\n","gluk\u00f3za":1,"glukóza2":"ó","\ud83d\ude00":true}"#,
            // Wrong types: left in extra as they are.
            #"{"sgv":true,"direction":["Flat"],"date":{"ms":1},"isValid":"yes","isReadOnly":2,"type":{"a":1},"trend":"up","app":[]}"#,
            // Big and odd numbers.
            #"{"rssi":9007199254740993,"noise":-0,"sgv":-0.0,"filtered":123456789012345678,"trend":1e14,"delta":1.5e-300}"#,
            // Strings for every string field from numbers and booleans; dates in every form.
            #"{"_id":5,"identifier":1.5,"app":true,"device":false,"subject":0,"modifiedBy":-1,"units":2.25,"direction":7}"#,
            #"{"created_at":"Wed, 01 May 2024 12:00:00 GMT","sysTime":"  2024-05-01 12:00 ","dateString":"not a date","date":"1405763055000"}"#,
            #"{"isValid":"true","isReadOnly":"false","utcOffset":"60","slope":1000.5,"intercept":25000,"scale":1}"#,
            #"{"isValid":0,"isReadOnly":1,"sgv":1e300,"mbg":-1E-2}"#,
        ]
        for doc in odd { try assertSameEntries([doc]) }
        try assertSameEntries(odd)
    }

    func testDuplicateNamesAndNonObjectsTakeTheTreePath() throws {
        // The tree path (and JSONDecoder behind it) decides these; the single pass steps aside.
        for doc in [#"{"sgv":1,"sgv":2}"#, #"{"x":1,"x":2}"#, #"{"sgv":null,"s\u0067v":3}"#, #"{"sgv":1.0000000000000001}"#,
                    #"{"a":{"b":1,"b":2}}"#, #"{"trend":1e15}"#] {
            let response = page([doc])
            XCTAssertNil(V3PageScanner.documents(Entry.self, from: response.body), doc)
            let tree = Result { try NightscoutResponse.decodeV3Documents(Entry.self, from: response, singlePass: false) }
            let single = Result { try NightscoutResponse.decodeV3Documents(Entry.self, from: response) }
            switch (single, tree) {
            case (.success(let a), .success(let b)): XCTAssertEqual(a, b, doc)
            case (.failure(let a), .failure(let b)): XCTAssertEqual(String(describing: a), String(describing: b), doc)
            default: XCTFail("\(doc): \(single) vs \(tree)")
            }
        }
        for body in [#"{"status":200,"status":200,"result":[]}"#, #"{"status":200,"result":[],"result":[]}"#,
                     #"{"result":[{"sgv":1}]}"#, #"{"status":200.5,"result":[]}"#, #"{"status":200,"result":[1]}"#] {
            XCTAssertNil(V3PageScanner.documents(Entry.self, from: Data(body.utf8)), body)
        }
        // Other envelope members are skipped, as the envelope decoder ignores them.
        let extra = Data(#"{"status":200,"meta":{"a":[1]},"result":[{"sgv":4}],"z":null}"#.utf8)
        XCTAssertEqual(V3PageScanner.documents(Entry.self, from: extra)?.first?.sgv, 4)
        // Only entries are scanned so far.
        XCTAssertNil(V3PageScanner.documents(Treatment.self, from: page([#"{"eventType":"Note"}"#]).body))
    }

    func testMalformedBodiesFailWithTheTreePathsError() throws {
        for body in [#"{"status":200,"result":[{"sgv":1},]}"#, #"{"status":200,"result":[{"sgv":1}"#, "not json",
                     #"{"status":200,"result":[{"sgv":01}]}"#, #"{"status":200,"result":[{"sgv":1 "trend":2}]}"#,
                     #"{"status":"200","result":[]}"#, #"{"status":200,"result":{"sgv":1}}"#] {
            let response = NightscoutHTTPResponse(status: 200, body: Data(body.utf8))
            XCTAssertNil(V3PageScanner.documents(Entry.self, from: response.body), body)
            let expected: Result<[Entry], NightscoutError>
            do { expected = .success(try JSONDecoder().decode(V3Envelope<[Entry]>.self, from: response.body).result) } catch {
                expected = .failure(.decoding(String(describing: error)))
            }
            let actual: Result<[Entry], NightscoutError>
            do { actual = .success(try NightscoutResponse.decodeV3Documents(Entry.self, from: response)) } catch {
                actual = .failure(try XCTUnwrap(error as? NightscoutError))
            }
            XCTAssertEqual(actual, expected, body)
        }
        // A missing comma is a decoding error that names the place.
        let broken = NightscoutHTTPResponse(status: 200, body: Data(#"{"status":200,"result":[{"sgv":1 "trend":2}]}"#.utf8))
        XCTAssertThrowsError(try NightscoutResponse.decodeV3Documents(Entry.self, from: broken)) { error in
            guard case NightscoutError.decoding(let text)? = error as? NightscoutError else { return XCTFail("\(error)") }
            XCTAssertFalse(text.isEmpty)
        }
    }

    func testResultCountHint() {
        let cases: [(String, Int?)] = [
            (#"{"status":200,"result":[]}"#, 0),
            (#"{"status":200,"result":[{"a":"],[,"},{"b":[1,2,3]}]}"#, 2),
            (#"{"result":[1,"x",null,[2,3],{"c":{"d":4}}],"status":200}"#, 5),
            (#"{"status":200,"other":[1,2],"result":[{"s\"result\"":1}]}"#, 1),
            (#"{"status":200,"x":{"result":[1,2]}}"#, nil),
            (#"{"status":200,"result":[1,2"#, nil),
            ("[]", nil),
        ]
        for (body, count) in cases {
            XCTAssertEqual(V3PageScanner.resultCountHint(Data(body.utf8)), count, body)
        }
    }
}
