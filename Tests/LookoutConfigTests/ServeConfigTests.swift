import Foundation
import XCTest

@testable import LookoutConfig

/// `[serve]` in the config: time zone, scripts, status port.
final class ServeConfigTests: XCTestCase {
    func testServeSettingsAreReadAndChecked() throws {
        let config = try HostConfig(text: """
            [serve]
            timezone = "Europe/Berlin"
            scripts = ["a.lua", "/srv/scripts"]
            status_port = 0
            """, baseDirectory: "/home/me/.config/lookout")
        XCTAssertEqual(config.serveTimeZone.identifier, "Europe/Berlin")
        XCTAssertEqual(config.serveScripts, ["/home/me/.config/lookout/a.lua", "/srv/scripts"])
        XCTAssertEqual(config.serveStatusPort, 0)
        XCTAssertEqual(HostConfig().serveStatusPort, 8765)
        XCTAssertNil(HostConfig().serveScripts)
        let bad: [(String, String)] = [
            ("timezone = \"Mars/Olympus\"", "unknown time zone \"Mars/Olympus\""),
            ("status_port = 70000", "expected a port number 0-65535"),
            ("scripts = 3", "expected a folder or file path"),
            ("port = 1", "unknown key port in [serve]"),
        ]
        for (line, message) in bad {
            XCTAssertThrowsError(try HostConfig(text: "[serve]\n" + line + "\n")) { error in
                XCTAssertTrue("\(error)".contains(message), "\(line): \(error)")
            }
        }
        XCTAssertEqual(HostConfig.timeZone(configured: nil, environment: ["TZ": ":Asia/Tokyo"]).identifier, "Asia/Tokyo")
        XCTAssertEqual(HostConfig.timeZone(configured: "Europe/Paris", environment: ["TZ": "Asia/Tokyo"]).identifier, "Europe/Paris")
    }

    /// `[serve] hosts` and `public_url`: the status server's names besides loopback, and the base
    /// of ack links, checked with errors that say what to write.
    func testServeHostsAndPublicURLAreReadAndChecked() throws {
        let config = try HostConfig(text: """
            [serve]
            hosts = ["Lookout.Example.ts.net", "[fd00::1]", "192.168.1.5"]
            public_url = "https://proxy.example.org/lookout/"
            """)
        XCTAssertEqual(config.serveHosts, ["lookout.example.ts.net", "fd00::1", "192.168.1.5", "proxy.example.org"])
        XCTAssertEqual(config.servePublicURL, "https://proxy.example.org/lookout")
        XCTAssertEqual(HostConfig().serveHosts, [])
        XCTAssertNil(HostConfig().servePublicURL)
        let bad: [(String, String)] = [
            ("hosts = \"a.example\"", "expected a list of host names"),
            ("hosts = [\"https://a.example\"]", "hosts[1]: \"https://a.example\" is not a host name: give the name alone"),
            ("hosts = [\"a.example\", \"b.example:8765\"]", "hosts[2]: \"b.example:8765\" is not a host name: give it without a port"),
            ("hosts = [\"*.example\"]", "wildcards are not accepted"),
            ("hosts = [\"\"]", "expected a host name, got an empty string"),
            ("hosts = [1]", "hosts[1]: expected a host name (a string), got an integer"),
            ("public_url = \"ftp://x\"", "expected an http or https URL"),
            ("public_url = \"https://u:p@x.example\"", "must not hold credentials"),
            ("public_url = \"https://x.example/?a=1\"", "must not have a query"),
        ]
        for (line, message) in bad {
            XCTAssertThrowsError(try HostConfig(text: "[serve]\n" + line + "\n")) { error in
                XCTAssertTrue("\(error)".contains(message), "\(line): \(error)")
            }
        }
    }
}
