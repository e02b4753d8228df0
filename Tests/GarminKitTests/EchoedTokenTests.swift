import Foundation
import XCTest

@testable import GarminKit

/// Issue 24 §6: a Connect API answer that echoes the request's tokens (a hostile server) keeps
/// them out of the error's text.
final class EchoedTokenTests: XCTestCase {
    func testAnEchoedBearerTokenIsRemovedFromTheError() {
        let token = "garmin-access-0123456789abcdef"
        let response = GarminHTTPResponse(status: 400, body: Data("bad token \(token), go away".utf8))
        let error = GarminHTTPCheck.error(response, url: URL(string: "http://127.0.0.1:9/x")!, secrets: [token])
        XCTAssertFalse(String(describing: error).contains(token), String(describing: error))
        XCTAssertTrue(String(describing: error).contains("go away"), String(describing: error))
    }
}
