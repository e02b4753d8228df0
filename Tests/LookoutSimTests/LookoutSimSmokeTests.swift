import XCTest
@testable import LookoutSim

final class LookoutSimSmokeTests: XCTestCase {
    func testNamespace() { _ = LookoutSim.self }
}
