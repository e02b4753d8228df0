import Foundation
import LookoutWire
import XCTest

/// `JSONParser` with numbers as written (`.asWritten`, Signal K's reading): `45500` is `.int`,
/// `45500.0` is `.double`; and the error texts every Kit shows.
final class JSONParserAsWrittenTests: XCTestCase {
    private func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(text, options: .init(numbers: .asWritten)) }

    private func parse(_ bytes: [UInt8]) throws -> JSONValue { try JSONParser.parse(bytes, options: .init(numbers: .asWritten)) }

    func testValidDocuments() throws {
        let cases: [(String, JSONValue)] = [
            ("null", .null), ("true", .bool(true)), ("false", .bool(false)),
            ("45500", .int(45500)), ("45500.0", .double(45500.0)), ("-0", .int(0)),
            ("3.85", .double(3.85)), ("-1.5e3", .double(-1500)), ("1E-2", .double(0.01)),
            ("9223372036854775807", .int(.max)), ("-9223372036854775808", .int(.min)),
            ("9223372036854775808", .double(9223372036854775808.0)),
            ("3.615624078431453", .double(3.615624078431453)),
            ("0.000123", .double(0.000123)),
            ("12345678901234567890123", .double(12345678901234567890123.0)),
            (#""a\"b\\c\/\n\t\u00e9\ud83d\ude00""#, .string("a\"b\\c/\n\té😀")),
            (#""Zürich""#, .string("Zürich")),
            (" [1, 2.5, \"x\", null, {}] ", .array([1, 2.5, "x", nil, .object([:])])),
            (#"{"a":{"b":[true]},"c":""}"#, ["a": ["b": [true]], "c": ""]),
        ]
        for (text, expected) in cases {
            assertIdentical(try parse(text), expected, text)
        }
    }

    func testIntegerVersusDoubleIsKept() throws {
        assertIdentical(try parse("45500"), .int(45500))
        assertIdentical(try parse("45500.0"), .double(45500))
        XCTAssertEqual(try parse("45500").doubleValue, 45500)
    }

    func testDoublesMatchStandardLibrary() throws {
        for text in ["0.1", "2.971", "16.341667", "1e22", "1e23", "123456789012345678e-10", "4.9e-324", "1.7976931348623157e308", "-122.44880152"] {
            XCTAssertEqual(try parse(text).doubleValue, Double(text), text)
        }
    }

    /// Numbers whose digits overflow 64 bits or whose exponent has more digits than the parser
    /// keeps decode to the correctly rounded double (the overflow bug json.decode had, and an
    /// exponent cut short to what a fraction of leading zeros cancels: 10^900000 is inf).
    func testNumbersBeyond64BitsAndLongExponents() throws {
        let cases: [(String, Double)] = [
            ("18446744073709551616", 18446744073709551616.0), ("-18446744073709551616", -18446744073709551616.0),
            ("1" + String(repeating: "0", count: 64), 1e64), ("1844674407370955161.6e-17", 18.446744073709551616),
            ("0.18446744073709551616e20", 18446744073709551616.0),
            ("0." + String(repeating: "0", count: 100_000) + "1e100001", 1),
            ("1e-1000000", 0), ("0." + String(repeating: "0", count: 99_999) + "1e99990", 1e-10),
        ]
        for (text, expected) in cases {
            guard case .double(let d) = try parse(text) else { return XCTFail("\(text.prefix(40)) is not a double") }
            XCTAssertEqual(d.bitPattern, expected.bitPattern, "\(text.prefix(40)): \(d)")
        }
    }

    /// Numbers beyond `Double`'s range are errors (Signal K read them as infinity before the
    /// parsers were merged; JSON has no infinity, and a server that sends one is broken).
    func testNumbersBeyondDoubleRangeAreErrors() {
        for text in ["1e1000000", "-1e400", "0." + String(repeating: "0", count: 99_999) + "1e1000000",
                     "-0." + String(repeating: "0", count: 100_000) + "15e1000001"] {
            XCTAssertThrowsError(try parse(text), String(text.prefix(40))) { error in
                XCTAssertEqual((error as? JSONParseError)?.message, "number out of range")
            }
        }
    }

    func testMalformedJSONGivesOffsetAndReason() {
        let cases: [(String, String)] = [
            ("", "empty input"),
            ("{", "end of input"),
            (#"{"a":1,}"#, "expected a string key"),
            ("[1,]", "expected a value"),
            ("01", "leading zero"),
            ("1.", "digit after '.'"),
            ("tru", "expected true"),
            (#""abc"#, "unterminated string"),
            ("\"a\u{01}b\"", "control character"),
            (#""\x""#, "invalid escape"),
            (#""\ud83d""#, "surrogate"),
            ("{} {}", "after the JSON value"),
            (#"{"a" 1}"#, "expected ':'"),
            ("// c\n1", "unexpected '/'"),
            (String(repeating: "[", count: 300), "nesting deeper"),
        ]
        for (text, fragment) in cases {
            XCTAssertThrowsError(try parse(text), text) { error in
                guard let e = error as? JSONParseError else {
                    return XCTFail("\(text): unexpected error \(error)")
                }
                XCTAssertTrue(e.description.contains(fragment), "\(text): \(e.description)")
            }
        }
        XCTAssertThrowsError(try parse([0x22, 0xFF, 0x22])) { error in
            XCTAssertTrue("\(error)".contains("UTF-8"), "\(error)")
        }
    }

}
