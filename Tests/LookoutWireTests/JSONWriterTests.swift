import Foundation
import LookoutWire
import XCTest

final class JSONWriterTests: XCTestCase {
    func testCompactSortedRoundTrip() throws {
        let v: JSONValue = ["b": [1, 2.5, "q\""], "a": nil, "c": true]
        XCTAssertEqual(v.jsonString, #"{"a":null,"b":[1,2.5,"q\""],"c":true}"#)
        assertIdentical(try JSONParser.parse(v.jsonString, options: .init(numbers: .asWritten)), v)
        XCTAssertEqual(v.description, v.jsonString)
        XCTAssertEqual(v.jsonData, Data(v.jsonString.utf8))
    }

    func testNumbers() {
        XCTAssertEqual(JSONValue.int(1_613_057_404_186).jsonString, "1613057404186")
        XCTAssertEqual(JSONValue.double(45500).jsonString, "45500.0")
        XCTAssertEqual(JSONValue.double(-0.5).jsonString, "-0.5")
        XCTAssertEqual(JSONValue.double(1e20).jsonString, "1e+20")
        XCTAssertEqual(JSONValue.double(.nan).jsonString, "null")
        XCTAssertEqual(JSONValue.double(-.infinity).jsonString, "null")
    }

    /// Strings escape as `JSON.stringify` does: the short forms, `\u00XX` for other controls,
    /// `/` and non-ASCII as they are.
    func testStringEscapes() throws {
        let s = "a\"b\\c/\n\r\t\u{08}\u{0C}\u{01}\u{1F}é😀"
        XCTAssertEqual(JSONWriter.quoted(s), #""a\"b\\c/\n\r\t\b\f\u0001\u001fé😀""#)
        XCTAssertEqual(try JSONParser.parse(JSONWriter.quoted(s)), .string(s))
    }

    /// Every value the parser builds is written back to text that parses to the same value.
    func testRoundTripOfParsedDocuments() throws {
        let text = #"{"big":9007199254740993,"neg":-5,"d":1.5,"e":1e3,"s":"a\"b\\c\n\u00e9\ud83d\ude00","n":null,"b":[true,false]}"#
        let v = try JSONValue.parse(text)
        assertIdentical(v["big"]!, .int(9_007_199_254_740_993))
        assertIdentical(v["e"]!, .int(1000))
        XCTAssertEqual(v["s"], "a\"b\\c\né😀")
        assertIdentical(try JSONValue.parse(v.jsonString), v)
    }
}
