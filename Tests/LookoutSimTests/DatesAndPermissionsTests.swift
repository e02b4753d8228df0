import Foundation
@testable import LookoutSim
import XCTest
import LookoutWire

final class DatesAndPermissionsTests: XCTestCase {
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
