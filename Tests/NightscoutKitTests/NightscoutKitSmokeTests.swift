import XCTest
@testable import NightscoutKit

final class NightscoutKitSmokeTests: XCTestCase {
    func testVersion() { XCTAssertFalse(NightscoutKit.version.isEmpty) }
}
