import Foundation
import XCTest

@testable import LookoutConfig

final class HostConfigSecretTests: XCTestCase {
    var directory = ""

    override func setUpWithError() throws {
        directory = try configTestTemporaryDirectory()
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func writeSecret(_ name: String, _ content: String, mode: Int) throws -> String {
        let path = directory + "/" + name
        try content.write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    func config(_ profileBody: String) throws -> HostConfig {
        try HostConfig(
            text: "[nightscout.home]\nurl = \"x\"\n" + profileBody, fileName: "config.toml", baseDirectory: directory)
    }

    func testFromEnvironment() throws {
        let config = try config("secret_env = \"NS_API_SECRET\"")
        let secret = try XCTUnwrap(
            config.secret(
                service: "nightscout", profile: "home", name: "secret", environment: ["NS_API_SECRET": "s3cr3t"]))
        XCTAssertEqual(secret.value, "s3cr3t")
        XCTAssertEqual(secret.source, .environment(variable: "NS_API_SECRET"))
        XCTAssertEqual(secret.warnings, [])
        XCTAssertEqual("\(secret)", "secret from $NS_API_SECRET")
        XCTAssertFalse(String(reflecting: secret).contains("s3cr3t"))
        var dumped = ""
        dump(secret, to: &dumped)
        XCTAssertFalse(dumped.contains("s3cr3t"))
    }

    func testMissingOrEmptyEnvironmentVariable() throws {
        let config = try config("secret_env = \"NS_API_SECRET\"")
        XCTAssertThrowsError(
            try config.secret(service: "nightscout", profile: "home", name: "secret", environment: [:])
        ) { error in
            XCTAssertEqual(
                "\(error)",
                "config.toml:3:14: nightscout.home.secret_env: environment variable NS_API_SECRET is not set")
        }
        XCTAssertThrowsError(
            try config.secret(
                service: "nightscout", profile: "home", name: "secret", environment: ["NS_API_SECRET": ""])
        ) { error in
            XCTAssertTrue("\(error)".hasSuffix("environment variable NS_API_SECRET is empty"))
        }
    }

    func testNotConfigured() throws {
        let config = try config("token_env = \"T\"")
        XCTAssertNil(try config.secret(service: "nightscout", profile: "home", name: "secret", environment: [:]))
        XCTAssertNil(try config.secret(service: "nightscout", profile: "nobody", name: "token", environment: [:]))
        XCTAssertNil(try config.secret(service: "garmin", profile: "home", name: "token", environment: [:]))
    }

    func testFromPrivateFile() throws {
        let path = try writeSecret("home.token", "tok-123\n", mode: 0o600)
        let config = try config("token_file = \"\(path)\"")
        let secret = try XCTUnwrap(
            config.secret(service: "nightscout", profile: "home", name: "token", environment: [:]))
        XCTAssertEqual(secret.value, "tok-123")
        XCTAssertEqual(secret.source, .file(path: path))
        XCTAssertEqual(secret.warnings, [])
    }

    func testFromWorldReadableFileWarns() throws {
        let path = try writeSecret("open.token", "tok-456\r\n", mode: 0o644)
        let config = try config("token_file = \"\(path)\"")
        let secret = try XCTUnwrap(
            config.secret(service: "nightscout", profile: "home", name: "token", environment: [:]))
        XCTAssertEqual(secret.value, "tok-456")
        XCTAssertEqual(
            secret.warnings,
            [
                "config.toml:3: nightscout.home.token_file: secret file \(path) can be read by other users (mode 0644); "
                    + "run: chmod 600 \(path)"
            ])
        XCTAssertFalse(secret.warnings.joined().contains("tok-456"))
    }

    func testOnlyOneTrailingNewlineIsRemoved() throws {
        let path = try writeSecret("two.token", "abc\n\n", mode: 0o600)
        let config = try config("token_file = \"\(path)\"")
        XCTAssertEqual(
            try config.secret(service: "nightscout", profile: "home", name: "token", environment: [:])?.value, "abc\n")
    }

    func testRelativeAndTildePaths() throws {
        _ = try writeSecret("relative.token", "rel", mode: 0o600)
        let relative = try config("token_file = \"relative.token\"")
        XCTAssertEqual(
            try relative.secret(service: "nightscout", profile: "home", name: "token", environment: [:])?.value, "rel")

        try FileManager.default.createDirectory(atPath: directory + "/.config", withIntermediateDirectories: true)
        _ = try writeSecret(".config/home.token", "tilde", mode: 0o600)
        let tilde = try config("token_file = \"~/.config/home.token\"")
        let secret = try tilde.secret(
            service: "nightscout", profile: "home", name: "token", environment: ["HOME": directory])
        XCTAssertEqual(secret?.value, "tilde")
        XCTAssertEqual(secret?.source, .file(path: directory + "/.config/home.token"))
    }

    func testFileProblems() throws {
        let missing = directory + "/missing.token"
        let empty = try writeSecret("empty.token", "\n", mode: 0o600)
        let binary = directory + "/binary.token"
        try Data([0xC3, 0x28]).write(to: URL(fileURLWithPath: binary))
        let cases: [(String, String)] = [
            (missing, "secret file \(missing) does not exist"),
            (empty, "secret file \(empty) is empty"),
            (directory, "secret file \(directory) is a directory"),
            (binary, "secret file \(binary) is not UTF-8 text"),
        ]
        for (path, message) in cases {
            let config = try config("token_file = \"\(path)\"")
            XCTAssertThrowsError(
                try config.secret(service: "nightscout", profile: "home", name: "token", environment: [:])
            ) { error in
                XCTAssertEqual("\(error)", "config.toml:3:14: nightscout.home.token_file: \(message)")
            }
        }
    }

    func testUnreadableFile() throws {
        // Root can read any file, so as root use one whose reads fail for everyone.
        let path = getuid() == 0 ? "/proc/self/mem" : try writeSecret("locked.token", "x", mode: 0o000)
        let config = try config("token_file = \"\(path)\"")
        XCTAssertThrowsError(try config.secret(service: "nightscout", profile: "home", name: "token", environment: [:]))
        { error in
            XCTAssertTrue("\(error)".hasSuffix("secret file \(path) cannot be read"))
        }
    }

    func testEnvironmentWinsThenFileIsTheFallback() throws {
        let path = try writeSecret("fallback.token", "from-file", mode: 0o600)
        let config = try config("secret_env = \"NS_API_SECRET\"\nsecret_file = \"\(path)\"")
        XCTAssertEqual(
            try config.secret(
                service: "nightscout", profile: "home", name: "secret", environment: ["NS_API_SECRET": "from-env"])?
                .value,
            "from-env")
        XCTAssertEqual(
            try config.secret(service: "nightscout", profile: "home", name: "secret", environment: [:])?.value,
            "from-file")
    }
}
