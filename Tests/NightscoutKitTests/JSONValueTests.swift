import Foundation
import XCTest
@testable import NightscoutKit

final class JSONValueTests: XCTestCase {
    func testExactIntegersAndKinds() throws {
        let v = try jsonTree(#"[9223372036854775807, -9223372036854775808, 1714557600000, 1.5, 1e300, "s", true, false, null, {"a":{}}, []]"#)
        XCTAssertEqual(v, .array([.int(.max), .int(.min), .int(1_714_557_600_000), .double(1.5), .double(1e300), .string("s"),
                                  .bool(true), .bool(false), .null, .object(["a": .object([:])]), .array([])]))
        let text = String(decoding: try JSONEncoder().encode(v), as: UTF8.self)
        XCTAssertTrue(text.contains("9223372036854775807"), text)
        XCTAssertTrue(text.contains("-9223372036854775808"), text)
        XCTAssertEqual(try jsonTree(v), v)
    }

    func testAccessors() throws {
        let v = try jsonTree(#"{"n":"12.5","i":3,"s":"x","o":{"k":1}}"#)
        XCTAssertEqual(v["n"]?.doubleValue, 12.5)
        XCTAssertEqual(v["i"]?.doubleValue, 3)
        XCTAssertEqual(v["s"]?.stringValue, "x")
        XCTAssertNil(v["s"]?.doubleValue)
        XCTAssertEqual(v["o"]?["k"], .int(1))
        XCTAssertNil(v["missing"])
        XCTAssertNil(JSONValue.int(1)["k"])
    }
}
