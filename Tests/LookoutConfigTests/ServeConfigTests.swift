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
}
