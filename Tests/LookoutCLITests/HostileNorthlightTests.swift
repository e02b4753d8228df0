import Foundation
import XCTest

/// Issue 24 §6: a Northlight server that echoes the API key in a 400's `field` and `message`
/// gets it printed nowhere: `lookout feedback` shows the refusal with the key removed.
final class HostileNorthlightTests: CLITestCase, @unchecked Sendable {
    private let key = "nl_live_hostile0123456789abcdef"

    func testAnEchoedAPIKeyNeverReachesFeedbacksOutput() throws {
        let body = #"{"error":"validation_error","field":"\#(key)","message":"the key \#(key) is not welcome here"}"#
        let peer = try HoldingHTTPPeer { _, _ in .answer(400, body: body) }
        defer { peer.stop() }
        try """
            [northlight.hostile]
            url = "\(peer.baseURL)/api/v1"
            api_key_env = "NL_KEY"
            timeout = "5s"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let result = try lookout(["feedback", "--profile", "hostile", "--no-input", "--title", "T", "--description", "D"],
                                 environment: ["NL_KEY": key], timeout: 60)
        assertExit(result, 1)
        XCTAssertTrue(result.stderr.contains("invalid input"), result.description)
        XCTAssertTrue(result.stderr.contains("is not welcome here"), "the rest of the server's text stays\n\(result)")
        XCTAssertFalse(result.stdout.contains(key) || result.stderr.contains(key), result.description)
        XCTAssertFalse(result.stderr.contains("hostile0123456789"), "not even part of the key\n\(result)")
    }
}
