import Foundation
import LookoutSim
import XCTest

/// R1: uploads survive crashes. A script uploads `count` glucose readings through the outbox to
/// the simulator while it injects failures (500s, 429s, and answers cut off after the document
/// was stored); the `lookout` process is killed with SIGKILL three times at random points and
/// started again. Afterwards the simulator holds every reading exactly once.
///
/// `LOOKOUT_R1_COUNT` sets the number of readings (default 10,000).
final class OutboxReliabilityTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is only used from the test's own task.

    /// One simulator for the process (stopping a server while connections arrive can trap in NIO).
    private static let simulator = NightscoutSimulator(options: .init(authFailDelay: .zero))

    static let script = """
        local nightscout = require "nightscout"
        local outbox = require "outbox"
        local home = assert(nightscout.client "home")
        local count, t0 = tonumber(arg[1]), 1700000000000
        for i = 1, count do
          local queued, err = home:upload_bg { sgv = 40 + i % 300, date = t0 + i * 300000, device = "r1" }
          if not queued then error(err) end
          if i % 100 == 0 then print("queued " .. i) end
        end
        -- Everything is queued: send what is still pending, ignoring the retry waits.
        while true do
          local left = assert(outbox.list { limit = 1 })
          if #left == 0 then break end
          if left[1].state == "failed" then error("failed for good: " .. tostring(left[1].error)) end
          assert(outbox.flush())
        end
        print("done")
        """

    func testR1UploadsSurviveThreeKillsAndArriveExactlyOnce() async throws {
        let count = Int(ProcessInfo.processInfo.environment["LOOKOUT_R1_COUNT"] ?? "") ?? 10_000
        let sim = Self.simulator
        let url = try await sim.start()
        let token = await sim.addSubject(name: "r1-\(UUID().uuidString.prefix(8))", roles: ["admin"])
        await sim.inject(.status(500), fraction: 0.03, seed: 1, pathPrefix: "/api/v3/entries")
        await sim.inject(.truncated, fraction: 0.02, seed: 2, pathPrefix: "/api/v3/entries")
        await sim.inject(.tooManyRequests(retryAfterSeconds: 1), fraction: 0.01, seed: 3, pathPrefix: "/api/v3/entries")
        try """
            [nightscout.home]
            url = "\(url.absoluteString)"
            token_env = "NS_TOKEN"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        try writeFile("r1.lua", Self.script)

        // Kill points: after a random hundred in each third of the run.
        var random = SystemRandomNumberGenerator()
        let hundreds = max(count / 100, 3)
        let kills = (0..<3).map { third in
            100 * Int.random(in: (third * hundreds / 3 + 1)...max(third * hundreds / 3 + 1, (third + 1) * hundreds / 3 - 1), using: &random)
        }
        let started = Date()
        for point in kills {
            let run = try launch(["run", "r1.lua", String(count)], environment: ["NS_TOKEN": token])
            XCTAssertTrue(run.waitForOutput(containing: "queued \(point)\n", timeout: 300), "run reached \(point):\n\(run.output(.stderr))")
            run.send(signal: SIGKILL)
            _ = run.waitForExit(timeout: 30)
        }
        let last = try launch(["run", "r1.lua", String(count)], environment: ["NS_TOKEN": token])
        let result = try XCTUnwrap(last.waitForExit(timeout: 900))
        assertExit(result, 0)
        XCTAssertTrue(result.stdout.hasSuffix("done\n"), "\(result)")
        let seconds = Date().timeIntervalSince(started)

        await sim.clearFaults()
        let stored = await sim.documents("entries").filter { $0["device"]?.stringValue == "r1" }
        var copies: [String: Int] = [:]
        for doc in stored { copies[doc["identifier"]?.stringValue ?? "none", default: 0] += 1 }
        XCTAssertEqual(stored.count, count, "each reading stored once")
        XCTAssertEqual(copies.count, count, "distinct identifiers")
        XCTAssertEqual(copies.values.filter { $0 > 1 }.count, 0, "no duplicates")
        let dates = Set(stored.compactMap { $0["date"]?.doubleValue.map { Int64($0) } })
        XCTAssertEqual(dates, Set((1...count).map { 1_700_000_000_000 + Int64($0) * 300_000 }), "every reading, none lost")
        let faults = await sim.injectedFaultCount()
        print("R1: \(count) readings, killed at \(kills), \(faults) injected faults, "
              + "\(stored.count) stored, \(copies.values.filter { $0 > 1 }.count) duplicates, \(Int(seconds)) s")
    }
}
