import Foundation
import XCTest

/// A secret file other users can read is used, with a warning: `lookout run` prints it once on
/// standard error, `lookout doctor` lists it; neither shows the secret.
final class SecretFileWarningTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    private static let secret = "hook-SECRET-value-1234"

    /// A config whose webhook channel and Nightscout profile read their tokens from files.
    private func writeConfig(mode: Int) throws -> String {
        let tokenFile = home + "/hook.token"
        try Self.secret.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: tokenFile)
        try """
            [notify.hook]
            type = "webhook"
            url = "http://127.0.0.1:9/hook"
            token_file = "\(tokenFile)"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        return tokenFile
    }

    func testRunWarnsOnceAboutAReadableTokenFile() throws {
        let tokenFile = try writeConfig(mode: 0o644)
        let result = try runScript("print('ran')")
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "ran\n")
        let warning = "notify.hook.token_file: secret file \(tokenFile) can be read by other users (mode 0644); run: chmod 600 \(tokenFile)"
        XCTAssertEqual(result.stderr.components(separatedBy: warning).count - 1, 1, "once on stderr:\n\(result)")
        XCTAssertFalse(result.stderr.contains(Self.secret) || result.stdout.contains(Self.secret))

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: tokenFile)
        let quiet = try runScript("print('ran')")
        assertExit(quiet, 0)
        XCTAssertFalse(quiet.stderr.contains("can be read by other users"), quiet.description)
    }

    func testDoctorListsAReadableTokenFile() throws {
        let tokenFile = try writeConfig(mode: 0o640)
        let result = try lookout(["doctor"])
        assertExit(result, 0)
        let line = result.stdout.split(separator: "\n").first { $0.contains(" secrets ") }.map(String.init) ?? ""
        XCTAssertTrue(line.hasPrefix("  warning"), result.stdout)
        XCTAssertTrue(line.contains("secret file \(tokenFile) can be read by other users (mode 0640)"), result.stdout)
        XCTAssertTrue(result.stdout.contains("0 failed, 1 warning."), result.stdout)
        XCTAssertFalse(result.stdout.contains(Self.secret) || result.stderr.contains(Self.secret))
    }
}
