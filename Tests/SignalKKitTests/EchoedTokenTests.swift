import Foundation
import XCTest

@testable import SignalKKit

/// Issue 24 §6: a Signal K server whose error echoes what the request carried (the bearer token,
/// a login's password) gets neither into the error.
final class EchoedTokenTests: XCTestCase {
    func testAnEchoedTokenOrPasswordIsRemovedFromTheError() {
        let token = "sk-token-0123456789abcdef"
        let get = SignalKHTTPRequest(method: "GET", url: URL(string: "http://127.0.0.1:9/signalk/v1/api/self")!,
                                     headers: [SignalKHTTPHeader("Authorization", "Bearer " + token)])
        let echo = SignalKHTTPResponse(status: 400, body: Data(#"{"message":"token \#(token) refused"}"#.utf8))
        let error = SignalKHTTP.error(echo, get)
        XCTAssertFalse(error.description.contains(token), error.description)
        XCTAssertTrue(error.description.contains("refused"), error.description)

        let login = SignalKHTTPRequest(method: "POST", url: URL(string: "http://127.0.0.1:9/signalk/v1/auth/login")!,
                                       body: Data(#"{"username":"admin","password":"hunter2-long-pass"}"#.utf8))
        let denied = SignalKHTTPResponse(status: 401, body: Data("wrong password hunter2-long-pass".utf8))
        XCTAssertFalse(SignalKHTTP.error(denied, login).description.contains("hunter2-long-pass"))
    }
}
