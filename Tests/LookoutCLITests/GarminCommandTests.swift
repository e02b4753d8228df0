import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `lookout sim garmin` and `lookout garmin login|status|refresh|profile|logout` against it: the
/// MFA code is read from standard input, and no token value is ever printed.
final class GarminCommandTests: CLITestCase, @unchecked Sendable {
    func testLoginStatusRefreshProfileLogoutAgainstTheSimulator() throws {
        let sim = try launch(["sim", "garmin"])
        sim.closeInput()
        guard sim.waitForOutput(containing: "serving until Ctrl-C\n") else { return }
        let lines = sim.output().split(separator: "\n").map(String.init)
        let url = try XCTUnwrap(lines.first?.components(separatedBy: " at ").last)
        XCTAssertTrue(lines.contains { $0.hasPrefix("MFA user mfa@example.com") }, "\(lines)")
        try """
            [garmin.me]
            url = "\(url)"
            email = "mfa@example.com"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let env = ["GARMIN_PASSWORD": "correct horse battery"]

        let login = try lookout(["garmin", "login", "--password-env", "GARMIN_PASSWORD"], stdin: "123456\n", environment: env)
        assertExit(login, 0)
        XCTAssertTrue(login.stdout.contains("logged in as mfa@example.com (garmin.com), MFA"), login.stdout)
        XCTAssertTrue(login.stderr.contains("MFA code: "), login.stderr)
        let dir = home + "/state/garmin/me"
        let token = try String(contentsOfFile: dir + "/oauth2_token.json", encoding: .utf8)
        let access = try XCTUnwrap(token.components(separatedBy: "\"access_token\": \"").last?.components(separatedBy: "\"").first)
        let oauth1 = try String(contentsOfFile: dir + "/oauth1_token.json", encoding: .utf8)
        let secret = try XCTUnwrap(oauth1.components(separatedBy: "\"oauth_token_secret\": \"").last?.components(separatedBy: "\"").first)

        let status = try lookout(["garmin", "status"], environment: env)
        assertExit(status, 0)
        XCTAssertTrue(status.stdout.contains("logged in: yes (garmin.com), MFA"), status.stdout)
        XCTAssertTrue(status.stdout.contains("OAuth2 token expires 20"), status.stdout)
        let refresh = try lookout(["garmin", "refresh"], environment: env)
        assertExit(refresh, 0)
        let profile = try lookout(["garmin", "profile"], environment: env)
        assertExit(profile, 0)
        XCTAssertTrue(profile.stdout.contains("user name: mfa"), profile.stdout)
        let logout = try lookout(["garmin", "logout"], environment: env)
        assertExit(logout, 0)
        let after = try lookout(["garmin", "status"], environment: env)
        assertExit(after, 1)
        XCTAssertTrue(after.stdout.contains("not logged in"), after.stdout)
        for output in [login, status, refresh, profile, logout, after] {
            for s in [access, secret, "correct horse battery", "123456\n"] {
                XCTAssertFalse(output.stdout.contains(s) || output.stderr.contains(s), "leaked \(s.prefix(3))…")
            }
        }
        let wrong = try lookout(["garmin", "login", "--password-env", "GARMIN_PASSWORD"], environment: ["GARMIN_PASSWORD": "nope"])
        assertExit(wrong, 1)
        XCTAssertTrue(wrong.stderr.contains("invalid email or password"), wrong.stderr)

        sim.send(signal: SIGINT)
        let ended = try XCTUnwrap(sim.waitForExit(timeout: 20))
        assertExit(ended, 0)
    }
}
