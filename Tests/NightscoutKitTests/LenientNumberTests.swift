import LookoutWire
import NightscoutKit
import XCTest

final class LenientNumberTests: XCTestCase {
    /// Nightscout uploaders send numbers as numbers or as strings; both read as numbers.
    func testNumericStringsReadAsNumbers() throws {
        let v = try JSONParser.parse(#"{"n":"12.5","t":" 7 ","i":3,"s":"x","b":true}"#)
        XCTAssertEqual(v["n"]?.lenientDoubleValue, 12.5)
        XCTAssertEqual(v["t"]?.lenientDoubleValue, 7)
        XCTAssertEqual(v["i"]?.lenientDoubleValue, 3)
        XCTAssertNil(v["s"]?.lenientDoubleValue)
        XCTAssertNil(v["b"]?.lenientDoubleValue)
    }
}
