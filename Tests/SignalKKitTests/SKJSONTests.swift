import Foundation
import SignalKKit
import XCTest

final class SKJSONTests: XCTestCase {
    func testValidDocuments() throws {
        let cases: [(String, SKValue)] = [
            ("null", .null), ("true", .bool(true)), ("false", .bool(false)),
            ("45500", .int(45500)), ("45500.0", .double(45500.0)), ("-0", .int(0)),
            ("3.85", .double(3.85)), ("-1.5e3", .double(-1500)), ("1E-2", .double(0.01)),
            ("9223372036854775807", .int(Int.max)), ("-9223372036854775808", .int(Int.min)),
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
            XCTAssertEqual(try SKJSON.parse(text), expected, text)
        }
    }

    func testIntegerVersusDoubleIsKept() throws {
        XCTAssertEqual(try SKJSON.parse("45500"), .int(45500))
        XCTAssertEqual(try SKJSON.parse("45500.0"), .double(45500))
        XCTAssertEqual(try SKJSON.parse("45500").doubleValue, 45500)
        XCTAssertEqual(SKValue.double(4.0).intValue, 4)
        XCTAssertNil(SKValue.double(4.5).intValue)
    }

    func testDoublesMatchStandardLibrary() throws {
        for text in ["0.1", "2.971", "16.341667", "1e22", "1e23", "123456789012345678e-10", "4.9e-324", "1.7976931348623157e308", "-122.44880152"] {
            XCTAssertEqual(try SKJSON.parse(text).doubleValue, Double(text), text)
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
            ("0." + String(repeating: "0", count: 99_999) + "1e1000000", .infinity),
            ("-0." + String(repeating: "0", count: 100_000) + "15e1000001", -.infinity),
            ("0." + String(repeating: "0", count: 100_000) + "1e100001", 1),
            ("1e1000000", .infinity), ("1e-1000000", 0),
        ]
        for (text, expected) in cases {
            guard case .double(let d) = try SKJSON.parse(text) else { return XCTFail("\(text.prefix(40)) is not a double") }
            XCTAssertEqual(d.bitPattern, expected.bitPattern, "\(text.prefix(40)): \(d)")
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
            XCTAssertThrowsError(try SKJSON.parse(text), text) { error in
                guard let e = error as? SignalKDecodingError, case .invalidJSON = e else {
                    return XCTFail("\(text): unexpected error \(error)")
                }
                XCTAssertTrue(e.description.contains(fragment), "\(text): \(e.description)")
            }
        }
        XCTAssertThrowsError(try SKJSON.parse([0x22, 0xFF, 0x22])) { error in
            XCTAssertTrue("\(error)".contains("UTF-8"), "\(error)")
        }
    }

    func testSerializationRoundTrip() throws {
        let v: SKValue = ["b": [1, 2.5, "q\""], "a": nil, "c": true]
        XCTAssertEqual(v.jsonString, #"{"a":null,"b":[1,2.5,"q\""],"c":true}"#)
        XCTAssertEqual(try SKJSON.parse(v.jsonString), v)
        XCTAssertEqual(SKValue.double(45500).jsonString, "45500.0")
        let decoded = try JSONDecoder().decode(SKValue.self, from: Data(#"{"x":[1,"y",null]}"#.utf8))
        XCTAssertEqual(decoded, ["x": [1, "y", nil]])
    }

    func testTimestamps() {
        let cases: [(String, Double?)] = [
            ("2010-01-07T07:18:44Z", 1262848724),
            ("2014-08-15T16:00:00.081Z", 1408118400.081),
            ("2014-08-15T18:00:00.081+02:00", 1408118400.081),
            ("2014-08-15t16:00:00z", 1408118400),
            ("2014-08-15T16:00:00.123456789Z", 1408118400.123456789),
            ("2014-08-15T16:00:00", nil), ("2014-13-15T16:00:00Z", nil), ("2014-02-30T16:00:00Z", nil),
            ("2014-08-15T16:00:00.Z", nil), ("yesterday", nil), ("", nil),
        ]
        for (text, expected) in cases {
            let d = SKTimestamp.parse(text)
            if let expected { XCTAssertDate(d, expected) } else { XCTAssertNil(d, text) }
        }
        XCTAssertEqual(SKTimestamp.format(date(1408118400.081)), "2014-08-15T16:00:00.081Z")
        XCTAssertEqual(SKTimestamp.format(date(0)), "1970-01-01T00:00:00.000Z")
    }

    func testUnits() {
        XCTAssertEqual(SKUnits.degrees(fromRadians: .pi), 180, accuracy: 1e-12)
        XCTAssertEqual(SKUnits.radians(fromDegrees: 90), .pi / 2, accuracy: 1e-12)
        XCTAssertEqual(SKUnits.knots(fromMetersPerSecond: 1852.0 / 3600.0), 1, accuracy: 1e-12)
        XCTAssertEqual(SKUnits.knots(fromMetersPerSecond: 3.85), 7.4838, accuracy: 1e-4)
        XCTAssertEqual(SKUnits.metersPerSecond(fromKnots: 10), 5.144444, accuracy: 1e-6)
        XCTAssertEqual(SKUnits.celsius(fromKelvin: 293.15), 20, accuracy: 1e-9)
        XCTAssertEqual(SKUnits.kelvin(fromCelsius: -273.15), 0, accuracy: 1e-9)
    }
}
