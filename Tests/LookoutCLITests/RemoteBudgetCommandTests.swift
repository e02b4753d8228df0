import Foundation
import LookoutSim
import XCTest

/// Issue 13 §3 and `lookout remote release` with real processes: several `lookout run`s at once
/// share one budget per site through the state database, and only a person gives budget back.
final class RemoteBudgetCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is only used from the test's own task.

    /// One simulator for the process (stopping a server while connections arrive can trap in NIO),
    /// with a Loop profile so Remote 1.0 pushes are accepted.
    private static let simulator = NightscoutSimulator(options: .init(authFailDelay: .zero))
    private actor Started {
        private var url: URL?
        func url(of sim: NightscoutSimulator) async throws -> URL {
            if let url { return url }
            let started = try await sim.start()
            await sim.seed("profile", [[
                "startDate": "2024-05-01T09:00:00.000Z", "defaultProfile": "Default", "store": ["Default": [:]],
                "loopSettings": ["deviceToken": "0123abcd", "bundleIdentifier": "com.LOOKOUT01.loopkit.Loop"],
            ]])
            url = started
            return started
        }
    }
    private static let started = Started()

    /// Two live profiles of the one site: `loop` (4 U/h) and `lax` (the same URL spelled with a
    /// trailing slash, 40 U/h: the strictest applies).
    private func configure() async throws -> [String: String] {
        let url = try await Self.started.url(of: Self.simulator)
        try """
            [nightscout.loop]
            url = "\(url.absoluteString)"
            secret_env = "NS_SECRET"
            otp_url_env = "LOOP_OTP"
            remote = "live"
            max_bolus = 2
            max_bolus_per_hour = 4

            [nightscout.lax]
            url = "\(url.absoluteString)/"
            secret_env = "NS_SECRET"
            otp_url_env = "LOOP_OTP"
            remote = "live"
            max_bolus = 2
            max_bolus_per_hour = 40
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        return ["NS_SECRET": "this is my long pass phrase", "LOOP_OTP": Self.simulator.options.loop.otpURL]
    }

    /// Bolus amounts of the pushes the server accepted since `index`.
    private func bolusPushes(since index: Int) async -> [Double] {
        await Self.simulator.receivedLoopNotifications().dropFirst(index).filter { $0.status == 200 && $0.push != nil }
            .compactMap { $0.push?.payload["bolus-entry"]?.doubleValue }
    }

    /// A script that tries three 2 U boluses at once from `profile`, printing each result.
    private let boluses = """
        local nightscout = require "nightscout"
        local loop = assert(nightscout.client(arg[1]))
        local tasks = {}
        for i = 1, 3 do
          tasks[i] = task.spawn(function()
            local r, err = loop:bolus(2, { wait = false })
            print(r and r.state or ("refused:" .. tostring(err.reason or err.code)))
          end)
        end
        task.all(tasks)
        """

    /// §3: N = 6 `lookout run` processes started at once (half through each profile) against one
    /// site with 4 U/h: the simulator gets at most 4 U, and every refusal is in the audit log.
    func testProcessesStartedAtOnceShareOneBudget() async throws {
        let env = try await configure()
        let before = await Self.simulator.receivedLoopNotifications().count
        try writeFile("bolus.lua", boluses)
        let processes = try (0..<6).map { i in try launch(["run", "bolus.lua", i % 2 == 0 ? "loop" : "lax"], environment: env) }
        var lines: [String] = []
        for process in processes {
            process.closeInput()
            let result = try XCTUnwrap(process.waitForExit(timeout: 120))
            assertExit(result, 0)
            lines += result.stdout.split(separator: "\n").map(String.init)
        }
        XCTAssertEqual(lines.count, 18, "\(lines)")
        let pushed = await bolusPushes(since: before)
        XCTAssertEqual(pushed.reduce(0, +), 4, "the hourly limit is 4 U: \(pushed)\n\(lines)")
        XCTAssertEqual(lines.filter { $0 == "sent" }.count, 2, "\(lines)")
        XCTAssertEqual(lines.filter { $0 == "refused:exceedsHourlyTotal" }.count, 16, "\(lines)")

        let audit = try lookout(["audit", "--limit", "1000"], environment: env)
        assertExit(audit, 0)
        // Identical refusals are counted on one row ("repeated N more times") instead of written again.
        let auditLines = audit.stdout.split(separator: "\n").map(String.init)
        var refusals = 0
        for (i, line) in auditLines.enumerated() where line.contains("  refused        bolus 2 U") {
            refusals += 1
            if let repeated = auditLines.dropFirst(i + 1).prefix(2).first(where: { $0.hasPrefix("    repeated ") }) {
                refusals += Int(repeated.dropFirst("    repeated ".count).prefix { $0.isNumber }) ?? 0
            }
        }
        XCTAssertEqual(refusals, 16, "every refusal is audited:\n\(audit.stdout)")
        XCTAssertEqual(audit.stdout.split(separator: "\n").filter { $0.contains("  attempted      bolus 2 U") }.count, 2, audit.stdout)
    }

    /// `lookout remote release ID`: shows the command, refuses without a terminal to ask on,
    /// releases exactly one reservation with `--yes`, once, and audits it.
    func testReleaseNeedsConfirmationAndReleasesExactlyOne() async throws {
        let env = try await configure()
        let before = await Self.simulator.receivedLoopNotifications().count
        try writeFile("bolus.lua", boluses)
        let first = try lookout(["run", "bolus.lua", "loop"], environment: env)
        assertExit(first, 0)
        XCTAssertEqual(first.stdout.split(separator: "\n").sorted(), ["refused:exceedsHourlyTotal", "sent", "sent"])

        let audit = try lookout(["audit"], environment: env)
        let tickets = audit.stdout.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("    ticket ") else { return nil }
            return String(line.dropFirst("    ticket ".count).prefix(36))
        }
        XCTAssertEqual(tickets.count, 2, audit.stdout)
        let ticket = try XCTUnwrap(tickets.first)

        let unconfirmed = try lookout(["remote", "release", ticket], environment: env)
        assertExit(unconfirmed, 2)
        XCTAssertTrue(unconfirmed.stdout.contains("bolus 2 U on http://127.0.0.1:"), unconfirmed.stdout)
        XCTAssertTrue(unconfirmed.stderr.contains("not released: stdin is not a terminal"), unconfirmed.stderr)
        XCTAssertFalse(try lookout(["audit"], environment: env).stdout.contains("released"), "nothing released without confirmation")

        let released = try lookout(["remote", "release", String(ticket.prefix(8)).lowercased(), "--yes"], environment: env)
        assertExit(released, 0)
        XCTAssertTrue(released.stdout.contains("released \(ticket) (audited)"), released.stdout)
        let again = try lookout(["remote", "release", ticket, "--yes"], environment: env)
        assertExit(again, 2)
        XCTAssertTrue(again.stderr.contains("already released"), again.stderr)

        let after = try lookout(["audit", "--limit", "1000"], environment: env).stdout
        XCTAssertEqual(after.split(separator: "\n").filter { $0.contains("  released       bolus 2 U") }.count, 1, after)

        // Exactly one reservation (2 U) came back.
        let second = try lookout(["run", "bolus.lua", "lax"], environment: env)
        assertExit(second, 0)
        XCTAssertEqual(second.stdout.split(separator: "\n").sorted(), ["refused:exceedsHourlyTotal", "refused:exceedsHourlyTotal", "sent"])
        let pushed = await bolusPushes(since: before)
        XCTAssertEqual(pushed, [2, 2, 2])
    }
}
