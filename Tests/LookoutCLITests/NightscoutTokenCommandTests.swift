import Foundation
import LookoutSim
import XCTest

/// `lookout nightscout token create|list` against the simulator's Admin Tools API.
final class NightscoutTokenCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is only used from the test's own task.

    /// One simulator for the process (stopping a server while connections arrive can trap in NIO).
    private static let sim = NightscoutSimulator(options: .init(defaultRoles: ["denied"], authFailDelay: .zero))
    private actor Started {
        private var url: URL?
        func url(of sim: NightscoutSimulator) async throws -> URL {
            if let url { return url }
            let started = try await sim.start()
            url = started
            return started
        }
    }
    private static let started = Started()

    func testCreateWritesATokenFileAProfileCanUseAndListHidesSecrets() async throws {
        let url = try await Self.started.url(of: Self.sim)
        let file = work + "/reader.token"
        try """
            [nightscout.admin]
            url = "\(url.absoluteString)"
            secret_env = "NS_SECRET"

            [nightscout.reader]
            url = "\(url.absoluteString)"
            token_file = "\(file)"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let env = ["NS_SECRET": "this is my long pass phrase"]

        let made = try lookout(["nightscout", "token", "create", "admin", "lookout-reader", "readable", "--file", file], environment: env)
        assertExit(made, 0)
        let token = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .newlines)
        XCTAssertTrue(token.hasPrefix("lookoutrea-"), token)
        let secretPart = String(token.split(separator: "-").last!)
        XCTAssertFalse(made.stdout.contains(secretPart), "the token is never printed")
        XCTAssertTrue(made.stdout.contains("token lookoutrea-… written to \(file)"), made.stdout)
        XCTAssertTrue(made.stdout.contains("use it in a profile: token_file = \"\(file)\""), made.stdout)
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)

        let read = try runScript("""
            local nightscout = require "nightscout"
            local home = assert(nightscout.client "reader")
            print(type(assert(home:entries { last = "1h" })))
            """)
        assertExit(read, 0)
        XCTAssertEqual(read.stdout, "table\n")

        let list = try lookout(["nightscout", "token", "list", "admin"], environment: env)
        assertExit(list, 0)
        XCTAssertTrue(list.stdout.hasPrefix("NAME"), list.stdout)
        XCTAssertTrue(list.stdout.contains("lookout-reader  readable"), list.stdout)
        XCTAssertTrue(list.stdout.contains("lookoutrea-…"), list.stdout)
        XCTAssertFalse(list.stdout.contains(secretPart), list.stdout)

        let again = try lookout(["nightscout", "token", "create", "admin", "other", "readable", "--file", file], environment: env)
        assertExit(again, 2)
        XCTAssertTrue(again.stderr.contains("exists already"), again.stderr)
        let notAdmin = try lookout(["nightscout", "token", "list", "reader"], environment: env)
        assertExit(notAdmin, 1)
        XCTAssertTrue(notAdmin.stderr.contains("use the API secret"), notAdmin.stderr)
    }

    /// A mistyped role is refused before anything reaches the site, naming the known roles.
    func testAnUnknownRoleIsRefusedWithTheKnownOnes() throws {
        let run = try lookout(["nightscout", "token", "create", "home", "reader", "readabel"])
        assertExit(run, 2)
        XCTAssertTrue(run.stderr.contains("unknown role 'readabel' (did you mean readable?)"), run.stderr)
        XCTAssertTrue(run.stderr.contains("careportal, devicestatus-upload"), run.stderr)
    }
}
