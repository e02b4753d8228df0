import Foundation
import XCTest

@testable import LookoutConfig

/// `[state]`: the SQLite file by default, a PostgreSQL URL with its password from the
/// environment or a file, and clear errors that never show a password.
final class StateConfigTests: XCTestCase {
    func testWithoutStateSectionIsSQLite() throws {
        XCTAssertEqual(try HostConfig(text: "").stateDatabase(environment: [:]), .sqlite)
        XCTAssertEqual(try HostConfig(text: "[state]\n").stateDatabase(environment: [:]), .sqlite)
    }

    func testURLAndPasswordFromEnvironment() throws {
        let config = try HostConfig(text: """
            [state]
            url = "postgresql://lookout@db.example.org:6543/lookout_prod"
            password_env = "LOOKOUT_DB_PASSWORD"
            """)
        guard case .postgres(let location, let password) = try config.stateDatabase(environment: ["LOOKOUT_DB_PASSWORD": "pw-9f2"]) else {
            return XCTFail("not PostgreSQL")
        }
        XCTAssertEqual(location, PostgresLocation(user: "lookout", host: "db.example.org", port: 6543, database: "lookout_prod"))
        XCTAssertEqual(location.tls, .require, "TLS is required for a remote host unless configured")
        XCTAssertEqual(location.description, "postgresql://lookout@db.example.org:6543/lookout_prod")
        XCTAssertEqual(password?.value, "pw-9f2")
        XCTAssertFalse("\(String(describing: password))".contains("pw-9f2"))
    }

    func testLoopbackDefaultsAndTLSKey() throws {
        let local = try PostgresLocation.parse("postgres://me@127.0.0.1/state")
        XCTAssertEqual(local.port, 5432)
        XCTAssertEqual(local.tls, .prefer)
        let config = try HostConfig(text: "[state]\nurl = \"postgresql://me@localhost:5432/state\"\ntls = \"disable\"\n")
        guard case .postgres(let location, let password) = try config.stateDatabase(environment: [:]) else {
            return XCTFail("not PostgreSQL")
        }
        XCTAssertEqual(location.tls, .disable)
        XCTAssertNil(password)
    }

    func testBadURLsAreClearErrorsWithoutThePassword() {
        let cases: [(String, String)] = [
            ("postgresql://lookout:hunter2@db/lookout", "must not carry a password: give it with password_env or password_file"),
            ("mysql://lookout@db/lookout", "expected postgresql://USER@HOST:PORT/DATABASE"),
            ("postgresql://db.example.org/lookout", "names no user"),
            ("postgresql://lookout@db.example.org", "names no database"),
            ("postgresql://lookout@db.example.org/x?sslmode=disable", "no query or fragment"),
        ]
        for (url, expected) in cases {
            XCTAssertThrowsError(try HostConfig(text: "[state]\nurl = \"\(url)\"\n"), url) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains("state.url"), text)
                XCTAssertTrue(text.contains(expected), "\(url): \(text)")
                XCTAssertFalse(text.contains("hunter2"), text)
            }
        }
    }

    func testOtherKeysAreChecked() {
        XCTAssertThrowsError(try HostConfig(text: "[state]\nurl = \"postgresql://a@b/c\"\ntls = \"maybe\"\n")) { error in
            XCTAssertTrue("\(error)".contains("expected one of disable, prefer, require"), "\(error)")
        }
        XCTAssertThrowsError(try HostConfig(text: "[state]\nurll = \"postgresql://a@b/c\"\n")) { error in
            XCTAssertTrue("\(error)".contains("url"), "\(error)")
        }
        XCTAssertThrowsError(try HostConfig(text: "[state]\npassword_env = \"X\"\n").stateDatabase(environment: ["X": "y"])) { error in
            XCTAssertTrue("\(error)".contains("password_env needs a url"), "\(error)")
        }
        XCTAssertThrowsError(try HostConfig(text: "[state]\nurl = \"postgresql://a@b/c\"\npassword_env = \"PGPW\"\n")
            .stateDatabase(environment: [:])) { error in
            XCTAssertTrue("\(error)".contains("environment variable PGPW is not set"), "\(error)")
        }
    }
}
