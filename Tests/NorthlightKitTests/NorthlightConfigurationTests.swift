import Foundation
import NorthlightKit
import XCTest

/// HTTPS except loopback, and no key in any description.
final class NorthlightConfigurationTests: XCTestCase {
    func testHTTPSIsRequiredExceptForLoopback() throws {
        for good in ["https://northlight.app/api/v1", "https://example.com:8443/", "http://127.0.0.1:8080/api/v1",
                     "http://127.1.2.3/api", "http://localhost:9/api/v1", "http://[::1]:8080/api/v1"] {
            XCTAssertNoThrow(try NorthlightConfiguration(apiKey: "k", baseURL: URL(string: good)!), good)
        }
        let bad: [(String, String)] = [
            ("http://example.com/api/v1", "baseURL: HTTPS is required (plain HTTP only to a loopback address such as 127.0.0.1)"),
            ("http://127.0.0.1.example.com/api", "baseURL: HTTPS is required (plain HTTP only to a loopback address such as 127.0.0.1)"),
            ("http://10.0.0.1/api", "baseURL: HTTPS is required (plain HTTP only to a loopback address such as 127.0.0.1)"),
            ("ftp://northlight.app/api", "baseURL: expected an https URL, got scheme ftp"),
            ("https://user:pw@northlight.app/api", "baseURL: must not contain credentials"),
            ("https://northlight.app/api?x=1", "baseURL: must not have a query or fragment"),
            ("northlight.app", "baseURL: expected https://host[:port][/path]"),
        ]
        for (url, message) in bad {
            XCTAssertThrowsError(try NorthlightConfiguration(apiKey: "k", baseURL: URL(string: url)!), url) {
                XCTAssertEqual($0 as? NorthlightError, .invalidInput(message), url)
            }
        }
    }

    func testTrailingSlashIsDropped() throws {
        let c = try NorthlightConfiguration(apiKey: "k", baseURL: URL(string: "https://northlight.app/api/v1/")!)
        XCTAssertEqual(c.baseURL.absoluteString, "https://northlight.app/api/v1")
    }

    func testTheKeyIsInNoDescription() throws {
        let key = "nl_secret_0123456789abcdef"
        let configuration = try NorthlightConfiguration(apiKey: key, baseURL: URL(string: "http://127.0.0.1:1/api/v1")!)
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [String(describing: configuration), String(reflecting: configuration), "\(configuration)", dumped] {
            XCTAssertFalse(text.contains(key), text)
        }
        XCTAssertTrue(String(describing: configuration).contains("127.0.0.1"))
    }
}
