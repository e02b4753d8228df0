import Foundation
import LookoutSim
import XCTest

/// `lookout outbox` and `lookout audit` on what scripts left behind.
final class OutboxAuditCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is only used from the test's own task.

    /// One simulator for the process (stopping a server while connections arrive can trap in NIO).
    private static let simulator = NightscoutSimulator(options: .init(authFailDelay: .zero))
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

    /// A config with `reader` (a read-only token: uploads are refused with 403) and limits that
    /// make bolus commands dry runs.
    private func configure() async throws -> [String: String] {
        let url = try await Self.started.url(of: Self.simulator)
        let token = await Self.simulator.addSubject(name: "cli-\(UUID().uuidString.prefix(8))", roles: ["readable"])
        try """
            [nightscout.reader]
            url = "\(url.absoluteString)"
            token_env = "NS_TOKEN"
            max_bolus = 2
            max_bolus_per_hour = 3
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        return ["NS_TOKEN": token]
    }

    func testFailedUploadIsListedRetriedAndDropped() async throws {
        let env = try await configure()
        try writeFile("upload.lua", """
            local nightscout = require "nightscout"
            local reader = assert(nightscout.client "reader")
            local r, err = reader:upload_treatment { eventType = "Note", notes = "refused", date = 1717000000000 }
            if r then print(json.encode(r)) end
            print(err.code, err.status, err.outbox_id)
            """)
        let run = try lookout(["run", "upload.lua"], environment: env)
        assertExit(run, 0)
        let fields = run.stdout.trimmingCharacters(in: .newlines).split(separator: "\t").map(String.init)
        XCTAssertEqual(Array(fields.prefix(2)), ["auth", "403"], run.stdout)
        let id = try XCTUnwrap(fields.last)

        let list = try lookout(["outbox"], environment: env)
        assertExit(list, 0)
        XCTAssertTrue(list.stdout.hasPrefix("ID"), list.stdout)
        XCTAssertTrue(list.stdout.contains("\(id)  failed  1"), list.stdout)
        XCTAssertTrue(list.stdout.contains("#profile:reader"), list.stdout)
        XCTAssertFalse(list.stdout.contains(env["NS_TOKEN"]!), "no token in the listing")

        let retry = try lookout(["outbox", "retry", id], environment: env)
        assertExit(retry, 1)  // sent again with the profile's credentials, refused again
        XCTAssertTrue(retry.stdout.contains("\(id)  failed  2"), retry.stdout)

        assertExit(try lookout(["outbox", "drop", id], environment: env), 0)
        XCTAssertEqual(try lookout(["outbox"], environment: env).stdout, "the outbox is empty\n")
        let missing = try lookout(["outbox", "drop", id], environment: env)
        assertExit(missing, 2)
        XCTAssertEqual(missing.stderr, "lookout: no outbox item \(id)\n")
    }

    func testAuditShowsDryRunsAndRefusals() async throws {
        let env = try await configure()
        XCTAssertEqual(try lookout(["audit"], environment: env).stdout, "the audit log is empty\n")
        try writeFile("bolus.lua", """
            local nightscout = require "nightscout"
            local reader = assert(nightscout.client "reader")
            print(assert(reader:bolus(1)).state)
            print(select(2, reader:bolus(5)).reason)
            """)
        let run = try lookout(["run", "bolus.lua"], environment: env)
        assertExit(run, 0)
        XCTAssertEqual(run.stdout, "dry_run\nexceedsMaximum\n")
        let audit = try lookout(["audit"], environment: env)
        assertExit(audit, 0)
        let lines = audit.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, audit.stdout)
        XCTAssertTrue(lines[0].contains("dry-run        bolus 1 U  by bolus.lua  on "), audit.stdout)
        XCTAssertTrue(lines[1].contains("refused        bolus 5 U  by bolus.lua"), audit.stdout)
        XCTAssertEqual(lines[2], "    refused: amount 5 is above the maximum of 2 per command")
    }
}
