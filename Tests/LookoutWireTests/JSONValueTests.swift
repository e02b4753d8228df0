import Foundation
import LookoutWire
import XCTest

final class JSONValueTests: XCTestCase {
    func testExactIntegersAndKindsThroughCodable() throws {
        let v = try JSONParser.parse(#"[9223372036854775807, -9223372036854775808, 1714557600000, 1.5, 1e300, "s", true, false, null, {"a":{}}, []]"#)
        assertIdentical(v, .array([.int(.max), .int(.min), .int(1_714_557_600_000), .double(1.5), .double(1e300), .string("s"),
                                   .bool(true), .bool(false), .null, .object(["a": .object([:])]), .array([])]))
        let text = String(decoding: try JSONEncoder().encode(v), as: UTF8.self)
        XCTAssertTrue(text.contains("9223372036854775807"), text)
        XCTAssertTrue(text.contains("-9223372036854775808"), text)
        assertIdentical(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)), v)
        let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"x":[1,"y",null]}"#.utf8))
        assertIdentical(decoded, ["x": [1, "y", nil]])
    }

    func testAccessors() throws {
        let v = try JSONParser.parse(#"{"n":"12.5","i":3,"d":4.0,"f":4.5,"s":"x","o":{"k":1},"a":[true,null]}"#)
        XCTAssertNil(v["n"]?.doubleValue, "strings are not numbers")
        XCTAssertEqual(v["i"]?.doubleValue, 3)
        XCTAssertEqual(v["s"]?.stringValue, "x")
        XCTAssertNil(v["s"]?.doubleValue)
        XCTAssertEqual(v["o"]?["k"], .int(1))
        XCTAssertNil(v["missing"])
        XCTAssertNil(JSONValue.int(1)["k"])
        XCTAssertEqual(JSONValue.double(4.0).intValue, 4)
        XCTAssertEqual(JSONValue.double(4.0).int64Value, 4)
        XCTAssertNil(JSONValue.double(4.5).intValue)
        XCTAssertNil(JSONValue.double(1e19).int64Value)
        XCTAssertEqual(v["a"]?[0]?.boolValue, true)
        XCTAssertEqual(v["a"]?[1]?.isNull, true)
        XCTAssertNil(v["a"]?[2])
        XCTAssertEqual(v["a"]?.arrayValue?.count, 2)
        XCTAssertEqual(v.objectValue?.count, 7)
        XCTAssertEqual([JSONValue.null, true, 1, 1.5, "s", [], [:]].map(\.typeName),
                       ["null", "bool", "number", "number", "string", "array", "object"])
        XCTAssertTrue(JSONValue.double(1).isNumber)
        XCTAssertFalse(JSONValue.string("1").isNumber)
    }

    /// Numbers compare and hash as JavaScript sees them; the kind is still kept.
    func testNumbersCompareByValue() {
        XCTAssertEqual(JSONValue.int(1000), .double(1000))
        XCTAssertNotEqual(JSONValue.int(1000), .double(1000.5))
        XCTAssertNotEqual(JSONValue.int(1), .string("1"))
        XCTAssertEqual(Set<JSONValue>([.int(7), .double(7)]).count, 1)
        XCTAssertEqual(JSONValue.number(3), .int(3))
        assertIdentical(JSONValue.number(3), .int(3))
        assertIdentical(JSONValue.number(2.5), .double(2.5))
        assertIdentical(JSONValue.number(1e16), .double(1e16))
    }
}
