import Foundation
@testable import LookoutSim
import XCTest

final class JSONValueAndDatesTests: XCTestCase {
    func testInt64ExactRoundTripAndEscapes() throws {
        let text = #"{"big":9007199254740993,"neg":-5,"d":1.5,"e":1e3,"s":"a\"b\\c\n\u00e9\ud83d\ude00","n":null,"b":[true,false]}"#
        let v = try JSONValue.parse(text)
        XCTAssertEqual(v["big"], .int(9_007_199_254_740_993))
        XCTAssertEqual(v["e"], .double(1000))
        XCTAssertEqual(v["s"], "a\"b\\c\né😀")
        XCTAssertEqual(try JSONValue.parse(v.jsonString), v)
        XCTAssertEqual(JSONValue.int(1_613_057_404_186).jsonString, "1613057404186")
        XCTAssertEqual(JSONValue.double(.nan).jsonString, "null")
        for bad in ["", "{", "[1,]", "{\"a\" 1}", "tru", "01x", "\"\u{01}\""] {
            XCTAssertThrowsError(try JSONValue.parse(bad), bad)
        }
    }

    /// A high surrogate escape followed by an escape that is not a low surrogate used to trap
    /// (UInt32 overflow while combining the pair); now it is unpaired (U+FFFD). Hex digits are
    /// digits only (no sign).
    func testUnpairedSurrogateEscapesDoNotTrap() throws {
        XCTAssertEqual(try JSONValue.parse(#""\ud800\u0041""#), "\u{FFFD}A")
        XCTAssertEqual(try JSONValue.parse(#""\uD800\u0000x""#), "\u{FFFD}\u{0}x")
        XCTAssertEqual(try JSONValue.parse(#""\ud83d\ude00""#), "😀")
        XCTAssertEqual(try JSONValue.parse(#""\udc00""#), "\u{FFFD}")
        XCTAssertEqual(try JSONValue.parse(#""\ud800\ud800\udc00""#), "\u{FFFD}\u{10000}")
        for bad in [#""\u+041""#, #""\u-000""#, #""\ud800\u+dc0""#, #""\u12""#] {
            XCTAssertThrowsError(try JSONValue.parse(bad), bad)
        }
    }

    func testDateFormats() {
        XCTAssertEqual(NSDates.rfc1123(1_539_753_180_000), "Wed, 17 Oct 2018 05:13:00 GMT")
        XCTAssertEqual(NSDates.parseHTTPDate("Wed, 17 Oct 2018 05:13:00 GMT"), 1_539_753_180_000)
        XCTAssertEqual(NSDates.iso(1_405_763_055_000), "2014-07-19T09:44:15.000Z")
        XCTAssertEqual(NSDates.parseISO("2014-07-19T02:44:15-07:00")?.ms, 1_405_763_055_000)
        XCTAssertEqual(NSDates.parseISO("2014-07-19T02:44:15-07:00")?.offset, -420)
        XCTAssertEqual(NSDates.parseISO("2024-01-02T03:04:05,678+0100")?.ms, 1_704_161_045_678)
        XCTAssertEqual(NSDates.parseISO("2024-09-09")?.ms, 1_725_840_000_000)
        XCTAssertNil(NSDates.parseISO("yesterday"))
        // Numbers below 2000-01-01 in ms are seconds.
        XCTAssertEqual(NSDates.parseAny(.int(1_613_057_404))?.ms, 1_613_057_404_000)
        XCTAssertEqual(NSDates.parseAny("1613057404186")?.ms, 1_613_057_404_186)
    }

    func testPermissionWildcards() {
        XCTAssertTrue(NSPermission.implies("*", "api:treatments:create"))
        XCTAssertTrue(NSPermission.implies("*:*:read", "api:entries:read"))
        XCTAssertFalse(NSPermission.implies("*:*:read", "api:entries:create"))
        XCTAssertTrue(NSPermission.implies("api:*:*", "api:entries:create"))
        XCTAssertTrue(NSPermission.implies("api", "api:entries:create"))
        XCTAssertFalse(NSPermission.implies("*:*:read", "*"))
        XCTAssertTrue(NSPermission.implies("api:entries,treatments:read", "api:treatments:read"))
    }
}
