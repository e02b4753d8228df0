import Foundation
import LookoutSim
import XCTest

/// R1: an upload the script was told about survives crashes, and arrives once.
///
/// A script uploads `count` glucose readings through the outbox and prints `acked N` right after
/// `upload_bg` returned for reading N; only those readings count. The simulator fails some
/// requests (500s, 429s, answers cut off after the document was stored). `lookout run` is killed
/// with SIGKILL at random points of the queuing, and each new run queues from the reading after
/// the last one acknowledged (never an acknowledged one again). The last queuing run meets a
/// server that refuses every upload, so a backlog is left; then flush-only runs (they queue
/// nothing) are killed twice in the middle of `outbox.flush()`, and a last flush-only run sends
/// the rest. Afterwards the simulator holds every acknowledged reading exactly once, and its count
/// of POSTs per identifier gives the re-send rate (printed).
///
/// `LOOKOUT_R1_COUNT` sets the number of readings (default 10,000).
final class OutboxReliabilityTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is only used from the test's own task.

    /// One simulator for the process (stopping a server while connections arrive can trap in NIO).
    private static let simulator = NightscoutSimulator(options: .init(authFailDelay: .zero))

    /// Queues readings `arg[1]` to `arg[2]`; `acked N` means `upload_bg` returned for reading N.
    static let uploadScript = """
        local nightscout = require "nightscout"
        local home = assert(nightscout.client "home")
        local first, last, t0 = tonumber(arg[1]), tonumber(arg[2]), 1700000000000
        for i = first, last do
          local queued, err = home:upload_bg { sgv = 40 + i % 300, date = t0 + i * 300000, device = "r1" }
          if not queued then error(err) end
          print("acked " .. i)
        end
        print("queued all")
        """

    /// Queues nothing: sends what is pending, ignoring the retry waits, until the outbox is empty.
    static let flushScript = """
        local nightscout = require "nightscout"
        local outbox = require "outbox"
        local home = assert(nightscout.client "home")   -- opens the site's queue
        while true do
          local left = assert(outbox.list { limit = 100000 })
          if #left == 0 then break end
          for _, item in ipairs(left) do
            if item.state == "failed" then error("failed for good: " .. tostring(item.error)) end
          end
          print("flushing " .. #left)
          local report = assert(outbox.flush())
          print("flushed " .. report.sent)
        end
        print("done")
        """

    static let t0: Int64 = 1_700_000_000_000

    func testR1AcknowledgedUploadsSurviveKillsDuringQueuingAndFlushingAndArriveOnce() async throws {
        let count = Int(ProcessInfo.processInfo.environment["LOOKOUT_R1_COUNT"] ?? "") ?? 10_000
        XCTAssertGreaterThanOrEqual(count, 100, "LOOKOUT_R1_COUNT")
        let sim = Self.simulator
        let url = try await sim.start()
        let token = await sim.addSubject(name: "r1-\(UUID().uuidString.prefix(8))", roles: ["admin"])
        await sim.clearRequestLog()
        // 10,000 uploads with a progress line each: no output rate or outbox quota (issue 24 §3).
        try """
            [limits]
            log_rate = 0
            outbox_items = "none"
            outbox_bytes = "none"
            [nightscout.home]
            url = "\(url.absoluteString)"
            token_env = "NS_TOKEN"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        try writeFile("r1-upload.lua", Self.uploadScript)
        try writeFile("r1-flush.lua", Self.flushScript)
        let environment = ["NS_TOKEN": token]
        await injectFaultMix(sim)

        // Queuing: killed once in each of the first three quarters; the fourth run queues the
        // rest while the server refuses every upload (a backlog for the flushes).
        var acked = Set<Int>()
        var kills: [String] = []
        var random = SystemRandomNumberGenerator()
        for quarter in 0..<3 {
            let next = (acked.max() ?? 0) + 1
            let point = max(next + 1, Int.random(in: (quarter * count / 4 + 1)...((quarter + 1) * count / 4), using: &random))
            let run = try launch(["run", "r1-upload.lua", String(next), String(count)], environment: environment)
            XCTAssertTrue(run.waitForOutput(containing: "acked \(point)\n", timeout: 900), "run from \(next) reached \(point)")
            run.send(signal: SIGKILL)
            let killed = try XCTUnwrap(run.waitForExit(timeout: 30))
            XCTAssertEqual(killed.signal, SIGKILL, "\(killed)")
            let these = Self.acknowledged(killed.stdout)
            XCTAssertEqual(these.min(), next, "a run queues from the reading after the last acknowledged one")
            acked.formUnion(these)
            kills.append("queuing after \(these.max() ?? 0)")
        }
        await sim.clearFaults()
        await sim.inject(.status(503), fraction: 1.0, seed: 4, pathPrefix: "/api/v3/entries")
        let next = (acked.max() ?? 0) + 1
        let rest = try XCTUnwrap(try launch(["run", "r1-upload.lua", String(next), String(count)], environment: environment)
            .waitForExit(timeout: 900))
        assertExit(rest, 0)
        XCTAssertTrue(rest.stdout.hasSuffix("queued all\n"), "\(rest)")
        acked.formUnion(Self.acknowledged(rest.stdout))
        XCTAssertEqual(acked, Set(1...count), "every reading was acknowledged by one run")

        // Flushing: two runs killed in the middle of `outbox.flush()`, then one that finishes.
        await sim.clearFaults()
        await injectFaultMix(sim)
        for _ in 0..<2 {
            let run = try launch(["run", "r1-flush.lua"], environment: environment)
            // After two rounds the script has printed "flushing N" and is inside the third flush.
            XCTAssertTrue(run.waitForOutput(timeout: 900, "two flush rounds") { text in
                text.split(separator: "\n").filter { $0.hasPrefix("flushed ") }.count >= 2
            })
            run.send(signal: SIGKILL)
            let killed = try XCTUnwrap(run.waitForExit(timeout: 30))
            XCTAssertEqual(killed.signal, SIGKILL, "\(killed)")
            let pending = killed.stdout.split(separator: "\n").last { $0.hasPrefix("flushing ") }.flatMap { Int($0.dropFirst(9)) }
            XCTAssertGreaterThan(pending ?? 0, 0, "killed while items were being flushed: \(killed.stdout.suffix(300))")
            kills.append("flushing \(pending ?? 0) pending")
        }
        let last = try XCTUnwrap(try launch(["run", "r1-flush.lua"], environment: environment).waitForExit(timeout: 900))
        assertExit(last, 0)
        XCTAssertTrue(last.stdout.hasSuffix("done\n"), "\(last)")
        XCTAssertFalse(last.stdout.contains("acked"), "the last run only flushes")

        // What the server holds: every acknowledged reading, once.
        let faults = await sim.injectedFaultCount()
        await sim.clearFaults()
        let stored = await sim.documents("entries").filter { $0["device"]?.stringValue == "r1" }
        var byDate: [Int64: Int] = [:]
        var identifiers = Set<String>()
        for doc in stored {
            if let date = doc["date"]?.doubleValue { byDate[Int64(date), default: 0] += 1 }
            if let id = doc["identifier"]?.stringValue { identifiers.insert(id) }
        }
        let lost = acked.filter { byDate[Self.t0 + Int64($0) * 300_000] == nil }.sorted()
        let twice = byDate.filter { $0.value > 1 }.count
        XCTAssertEqual(lost.count, 0, "acknowledged readings missing on the server: \(lost.prefix(20))")
        XCTAssertEqual(twice, 0, "readings stored more than once")
        XCTAssertEqual(stored.count, count, "one document per reading")
        XCTAssertEqual(identifiers.count, stored.count, "one identifier per document")

        // How often the same document was sent again (answers lost, kills mid-send, refusals).
        let posts = await sim.postsByIdentifier(pathPrefix: "/api/v3/entries").filter { identifiers.contains($0.key) }
        XCTAssertEqual(Set(posts.keys), identifiers, "every stored reading was POSTed with its identifier")
        let total = posts.values.reduce(0, +)
        let resent = total - posts.count
        let rate = posts.isEmpty ? 0 : Double(resent) / Double(posts.count) * 100
        print("R1: \(count) readings acknowledged, SIGKILL \(kills.joined(separator: ", ")); \(faults) injected faults; "
              + "\(stored.count) stored, \(lost.count) lost, \(twice) stored twice; \(total) POSTs, \(resent) re-sends "
              + "(\(String(format: "%.1f", rate)) % of readings; \(posts.values.filter { $0 > 1 }.count) readings sent more than once)")
    }

    /// 3 % 500s, 2 % answers cut off after the document was stored, 1 % 429s on entry uploads.
    private func injectFaultMix(_ sim: NightscoutSimulator) async {
        await sim.inject(.status(500), fraction: 0.03, seed: 1, pathPrefix: "/api/v3/entries")
        await sim.inject(.truncated, fraction: 0.02, seed: 2, pathPrefix: "/api/v3/entries")
        await sim.inject(.tooManyRequests(retryAfterSeconds: 1), fraction: 0.01, seed: 3, pathPrefix: "/api/v3/entries")
    }

    /// The readings a run acknowledged (`acked N` lines).
    static func acknowledged(_ stdout: String) -> [Int] {
        stdout.split(separator: "\n").compactMap { $0.hasPrefix("acked ") ? Int($0.dropFirst(6)) : nil }
    }
}
