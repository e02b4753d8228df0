import Foundation
import LookoutSim
import XCTest

/// `lookout remote list` and `lookout audit` after a script sent a Remote 2.0 command.
final class RemoteCommandsCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulators are only used from the test's own task.

    /// Simulators for the process (stopping a server while connections arrive can trap in NIO):
    /// one with Remote 2.0 (pump maximum 10 U), one without.
    private static let with = NightscoutSimulator(options: .init(authFailDelay: .zero, loop: .init(pumpMaxBolus: 10)))
    private static let without = NightscoutSimulator(options: .init(authFailDelay: .zero, loop: .init(remoteCommands: false)))
    private actor Started {
        private var urls: [ObjectIdentifier: URL] = [:]
        func url(of sim: NightscoutSimulator) async throws -> URL {
            if let url = urls[ObjectIdentifier(sim)] { return url }
            let started = try await sim.start()
            urls[ObjectIdentifier(sim)] = started
            return started
        }
    }
    private static let started = Started()

    private func configure() async throws -> [String: String] {
        let url = try await Self.started.url(of: Self.with)
        let plain = try await Self.started.url(of: Self.without)
        try """
            [nightscout.loop]
            url = "\(url.absoluteString)"
            secret_env = "NS_SECRET"
            otp_url_env = "LOOP_OTP"
            remote = "live"
            max_bolus = 12
            max_bolus_per_hour = 20

            [nightscout.old]
            url = "\(plain.absoluteString)"
            secret_env = "NS_SECRET"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        return ["NS_SECRET": "this is my long pass phrase", "LOOP_OTP": Self.with.options.loop.otpURL]
    }

    func testRemoteListAndAuditShowRemote2CommandsAndOutcomes() async throws {
        let env = try await configure()
        try writeFile("remote2.lua", """
            local nightscout = require "nightscout"
            local loop = assert(nightscout.client "loop")
            local cmd = assert(loop:remote_command("bolus", 11))
            assert(cmd:wait { timeout = 20, interval = 0.05 })
            print(cmd.state, cmd.id)
            """)
        let run = try lookout(["run", "remote2.lua"], environment: env)
        assertExit(run, 0)
        let fields = run.stdout.trimmingCharacters(in: .newlines).split(separator: "\t").map(String.init)
        XCTAssertEqual(fields.first, "error", run.stdout)
        let id = try XCTUnwrap(fields.last)

        let list = try lookout(["remote", "list", "loop"], environment: env)
        assertExit(list, 0)
        XCTAssertTrue(list.stdout.contains("Error      bolus 11 U  \(id)"), list.stdout)
        XCTAssertTrue(list.stdout.contains("\n    Bolus 11 U exceeds the pump's maximum bolus of 10 U"), list.stdout)
        let pending = try lookout(["remote", "list", "loop", "--state", "pending"], environment: env)
        XCTAssertEqual(pending.stdout, "no remote commands\n")

        let audit = try lookout(["audit"], environment: env)
        assertExit(audit, 0)
        XCTAssertTrue(audit.stdout.contains("remote command 2.0 \(id) stored (Pending)"), audit.stdout)
        XCTAssertTrue(audit.stdout.contains("app-error      bolus 11 U  by remote2.lua"), audit.stdout)
        XCTAssertTrue(audit.stdout.contains("Error: Bolus 11 U exceeds the pump's maximum bolus of 10 U"), audit.stdout)

        let old = try lookout(["remote", "list", "old"], environment: env)
        assertExit(old, 1)
        XCTAssertEqual(old.stderr, "lookout: remote commands 2.0 not supported by this site\n")
        let missing = try lookout(["remote", "list", "nope"], environment: env)
        assertExit(missing, 2)
        let badState = try lookout(["remote", "list", "loop", "--state", "done"], environment: env)
        assertExit(badState, 2)
    }
}
