import Foundation
import LookoutWire
import XCTest

/// `JSONParser` (strict byte-level JSON → `JSONValue`) with its default, Foundation-compatible
/// number rule (`.integral`), checked against Foundation's `JSONDecoder`.
final class JSONParserTests: XCTestCase {
    private func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }

    private func parse(bytes: [UInt8]) throws -> JSONValue { try JSONParser.parse(Data(bytes)) }

    /// The error for `text`, failing when it parses.
    private func parseError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSONParseError? {
        parseError(bytes: Array(text.utf8), file: file, line: line)
    }

    private func parseError(bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> JSONParseError? {
        do {
            let v = try JSONParser.parse(Data(bytes))
            XCTFail("parsed \(String(decoding: bytes, as: UTF8.self)) as \(v)", file: file, line: line)
            return nil
        } catch let e as JSONParseError {
            return e
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
            return nil
        }
    }

    func testScalarsAndNesting() throws {
        assertIdentical(try parse("null"), .null)
        assertIdentical(try parse("true"), .bool(true))
        assertIdentical(try parse("false"), .bool(false))
        assertIdentical(try parse(#""x""#), .string("x"))
        assertIdentical(try parse("[]"), .array([]))
        assertIdentical(try parse("{}"), .object([:]))
        assertIdentical(try parse(#"{"a":[1,{"b":[[],{}],"c":null}],"d":{"e":{"f":"g"}}}"#),
                       .object(["a": .array([.int(1), .object(["b": .array([.array([]), .object([:])]), "c": .null])]),
                                "d": .object(["e": .object(["f": .string("g")])])]))
        assertIdentical(try parse("[[[1],[2,3]],[]]"), .array([.array([.array([.int(1)]), .array([.int(2), .int(3)])]), .array([])]))
    }

    func testWhitespace() throws {
        assertIdentical(try parse(" \t\r\n{ \"a\" :\n[ 1 ,\t2 ] }\r\n "), .object(["a": .array([.int(1), .int(2)])]))
        assertIdentical(try parse("\n 7 \n"), .int(7))
        // Only the four JSON blanks are whitespace.
        XCTAssertNotNil(parseError("\u{0B}1"))
        XCTAssertNotNil(parseError("\u{A0}1"))
    }

    func testEscapes() throws {
        assertIdentical(try parse(#""a\"b\\c\/d\be\ff\ng\rh\ti""#), .string("a\"b\\c/d\u{08}e\u{0C}f\ng\rh\ti"))
        assertIdentical(try parse(#""\u00e9\u00E9 \u20AC \u0000""#), .string("éé € \u{0}"))
        assertIdentical(try parse(#""plain é ünïcode 😀""#), .string("plain é ünïcode 😀"))
        assertIdentical(try parse(#"{"k\u0065y":1}"#), .object(["key": .int(1)]))
    }

    func testSurrogatePairs() throws {
        assertIdentical(try parse(#""\ud83d\ude00""#), .string("😀"))
        assertIdentical(try parse(#""x\uD834\uDD1Ey""#), .string("x𝄞y"))
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
        assertIdentical(try parse(bytes: [0x22, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80, 0x22]), .string("é€😀"))
    }

    func testControlCharactersMustBeEscaped() {
        XCTAssertEqual(parseError("\"a\u{01}b\"")?.offset, 2)
        XCTAssertEqual(parseError("\"a\nb\"")?.offset, 2)
        XCTAssertNotNil(parseError("\"a\\n\tb\""))
    }

    func testIntegersAtInt64Edges() throws {
        assertIdentical(try parse("9223372036854775807"), .int(.max))
        assertIdentical(try parse("-9223372036854775808"), .int(.min))
        assertIdentical(try parse("9223372036854775808"), .double(9_223_372_036_854_775_808))
        assertIdentical(try parse("-9223372036854775809"), .double(-9.223372036854775808e18))
        assertIdentical(try parse("123456789012345678901234567890"), .double(1.2345678901234568e29))
        assertIdentical(try parse("0"), .int(0))
        assertIdentical(try parse("-0"), .int(0))
        assertIdentical(try parse("1714557600000"), .int(1_714_557_600_000))
    }

    func testExponentAndFractionForms() throws {
        assertIdentical(try parse("1e3"), .int(1000))
        assertIdentical(try parse("1E+2"), .int(100))
        assertIdentical(try parse("2.50e1"), .int(25))
        assertIdentical(try parse("0.1e1"), .int(1))
        assertIdentical(try parse("100e-2"), .int(1))
        assertIdentical(try parse("1.0"), .int(1))
        assertIdentical(try parse("-0.0"), .int(0))
        assertIdentical(try parse("1.5"), .double(1.5))
        assertIdentical(try parse("-1.5e-3"), .double(-0.0015))
        assertIdentical(try parse("1e300"), .double(1e300))
        assertIdentical(try parse("4.9e-324"), .double(.leastNonzeroMagnitude))
        assertIdentical(try parse("0.30000000000000004"), .double(0.30000000000000004))
    }

    /// Digits beyond 64 bits become correctly rounded doubles; an exponent longer than the parser
    /// keeps (cancelled by a fraction as long) must not be cut short into a wrong integer.
    func testNumbersBeyond64BitsAndLongExponents() throws {
        assertIdentical(try parse("18446744073709551616"), .double(18446744073709551616.0))
        assertIdentical(try parse("1" + String(repeating: "0", count: 64)), .double(1e64))
        assertIdentical(try parse("1844674407370955161.6e-17"), .double(18.446744073709551616))
        let zeros = String(repeating: "0", count: 999_999)
        assertIdentical(try parse("0." + zeros + "1e1000005"), .int(100_000))
        assertIdentical(try parse("0." + zeros + "15e1000001"), .int(15))
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
        let ok = String(repeating: "[", count: JSONParser.defaultMaxDepth) + String(repeating: "]", count: JSONParser.defaultMaxDepth)
        XCTAssertNoThrow(try parse(ok))
        let deep = String(repeating: "[", count: JSONParser.defaultMaxDepth + 1) + String(repeating: "]", count: JSONParser.defaultMaxDepth + 1)
        XCTAssertEqual(parseError(deep)?.offset, JSONParser.defaultMaxDepth)
        let objects = String(repeating: #"{"a":"#, count: JSONParser.defaultMaxDepth + 1) + "1" + String(repeating: "}", count: JSONParser.defaultMaxDepth + 1)
        XCTAssertNotNil(parseError(objects))
    }

    func testDuplicateKeysLastWins() throws {
        assertIdentical(try parse(#"{"a":1,"a":2}"#), .object(["a": .int(2)]))
        let strict = try JSONParser.parseCheckingExactness(Data(#"{"a":1,"a":2}"#.utf8))
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
            let parsed = try JSONParser.parseCheckingExactness(Data(text.utf8))
            XCTAssertEqual(parsed.value, expected, text)
            XCTAssertTrue(parsed.exact, text)
        }
    }

    /// Numbers whose `JSONDecoder` reading is not decided by the text alone are flagged, so
    /// response decoding falls back to `JSONDecoder`.
    func testAmbiguousNumbersAreFlagged() throws {
        for text in ["1.0000000000000001", "9223372036854775806.0", "123456789012345678.0", "1e15", "1e18", "1e-400"] {
            let parsed = try JSONParser.parseCheckingExactness(Data(text.utf8))
            XCTAssertFalse(parsed.exact, text)
            // The best-effort value still matches JSONDecoder's where it is representable.
            if text == "1e15" || text == "1e18" {
                XCTAssertEqual(parsed.value, try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)), text)
            }
        }
    }

    /// Unpaired surrogate escapes are errors (the simulator's own parser once trapped on them,
    /// later replaced them with U+FFFD); hex digits are digits only (no sign).
    func testUnpairedSurrogateEscapesAreErrorsNotTraps() throws {
        for bad in [#""\ud800\u0041""#, #""\uD800\u0000x""#, #""\udc00""#, #""\ud800\ud800\udc00""#,
                    #""\u+041""#, #""\u-000""#, #""\ud800\u+dc0""#, #""\u12""#] {
            XCTAssertNotNil(parseError(bad), bad)
        }
        assertIdentical(try parse(#""\ud83d\ude00""#), "😀")
        for bad in ["", "{", "[1,]", "{\"a\" 1}", "tru", "01x", "\"\u{01}\""] {
            XCTAssertNotNil(parseError(bad), bad)
        }
    }
}
