import Lua
import XCTest

/// How an error reads: service, status and message, each said once.
final class ErrorTextTests: XCTestCase {
    func testEachPartIsSaidOnce() {
        XCTAssertEqual(LuaErrorInfo(code: "http", message: "forbidden", status: 403, service: "nightscout").description,
                       "nightscout: HTTP 403: forbidden")
        // The message names the status already.
        XCTAssertEqual(LuaErrorInfo(code: "http", message: "HTTP 403: {\"status\":403}", status: 403, service: "nightscout").description,
                       "nightscout: HTTP 403: {\"status\":403}")
        XCTAssertEqual(LuaErrorInfo(code: "auth", message: "not authorised (HTTP 401)", status: 401, service: "signalk").description,
                       "signalk: not authorised (HTTP 401)")
        // The message names the service already.
        XCTAssertEqual(LuaErrorInfo(code: "http", message: "Nightscout: HTTP 500", status: 500, service: "nightscout").description,
                       "Nightscout: HTTP 500")
    }
}
