import Foundation
import LookoutSim
import XCTest

final class LoopOTPTests: XCTestCase {
    func testRFC6238Vectors() {
        let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        XCTAssertEqual(LoopOTP.base32Decode(secret), Array("12345678901234567890".utf8))
        for (t, code) in [(59.0, "287082"), (1_111_111_109, "081804"), (1_234_567_890, "005924"), (2_000_000_000, "279037")] {
            XCTAssertEqual(LoopOTP.code(base32Secret: secret, at: Date(timeIntervalSince1970: t)), code, "\(t)")
        }
        XCTAssertNil(LoopOTP.code(base32Secret: "not base32!", at: Date()))
    }
}
