import Foundation
import LookoutSim
import XCTest
import LookoutWire

/// `lookout sync` against an in-process simulator: incremental sync twice, `--full` finding
/// documents history misses, and configuration and API errors.
final class SyncCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is only used from the test's own task.

    /// One simulator for the process (stopping a server while connections arrive can trap in NIO).
    private static let simulator = NightscoutSimulator(options: .init(apiSecret: secret, authFailDelay: .zero))
    private static let secret = "sync command long pass phrase"

    /// Starts the simulator once and remembers its address.
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

    /// Starts the simulator and writes a config with `home` (token) and `legacy` (API secret).
    private func configure() async throws -> [String: String] {
        let sim = Self.simulator
        let url = try await Self.started.url(of: sim)
        let token = await sim.addSubject(name: "sync-\(UUID().uuidString.prefix(8))", roles: ["admin"])
        try """
            [nightscout.home]
            url = "\(url.absoluteString)"
            token_env = "NS_TOKEN"
            [nightscout.legacy]
            url = "\(url.absoluteString)"
            secret_env = "NS_SECRET"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        return ["NS_TOKEN": token, "NS_SECRET": Self.secret]
    }

    /// The `added` count of the summary line of `collection` in `stdout`.
    private func added(_ collection: String, in stdout: String) -> Int? {
        for line in stdout.split(separator: "\n") where line.hasPrefix(collection + ": ") {
            let words = line.dropFirst(collection.count + 2).split(separator: " ")
            if words.count > 1, words[1].hasPrefix("added") { return Int(words[0]) }
        }
        return nil
    }

    func testSyncTwiceThenNothingNew() async throws {
        let env = try await configure()
        try writeFile("upload.lua", """
            local nightscout = require "nightscout"
            local home = assert(nightscout.client "home")
            for i = 1, 3 do
              assert(home:upload_bg { sgv = 100 + i, date = 1717000000000 + i * 300000, device = "cli-sync" })
            end
            print("uploaded")
            """)
        let upload = try lookout(["run", "upload.lua"], environment: env)
        assertExit(upload, 0)

        let first = try lookout(["sync", "home", "entries", "treatments"], environment: env, timeout: 120)
        assertExit(first, 0)
        XCTAssertGreaterThanOrEqual(added("entries", in: first.stdout) ?? -1, 3, "\(first)")
        XCTAssertNotNil(added("treatments", in: first.stdout), "\(first)")
        XCTAssertFalse(first.stderr.contains("\r"), "no terminal redraws without a terminal")

        let second = try lookout(["sync", "home", "entries"], environment: env, timeout: 120)
        assertExit(second, 0)
        XCTAssertTrue(second.stdout.hasPrefix("entries: 0 added, 0 updated, 0 deleted"), "\(second)")

        // Every default collection is synced when none is named.
        let all = try lookout(["sync", "home"], environment: env, timeout: 120)
        assertExit(all, 0)
        for collection in ["entries", "treatments", "devicestatus", "profile"] {
            XCTAssertNotNil(added(collection, in: all.stdout), "\(collection): \(all)")
        }
        XCTAssertEqual(added("entries", in: all.stdout), 0)

        // The scripts' mirror holds what the command stored.
        try writeFile("mirror.lua", """
            local nightscout = require "nightscout"
            local home = assert(nightscout.client "home")
            local docs = assert(home:mirror("entries", { from = 1717000000000, to = 1717001000000 }))
            print(#docs, docs[1].sgv, docs[1].device)
            """)
        let mirror = try lookout(["run", "mirror.lua"], environment: env)
        assertExit(mirror, 0)
        XCTAssertEqual(mirror.stdout, "3\t103\tcli-sync\n")
    }

    func testFullFindsDocumentsHistoryMisses() async throws {
        let env = try await configure()
        // Written as through API v1: no srvModified, so never in history.
        let t0: Int64 = 1_717_200_000_000  // 2024-06-01T00:00:00Z
        await Self.simulator.seed("entries", (0..<4).map { i in
            JSONValue.object(["type": .string("sgv"), "sgv": .int(90 + Int64(i)), "date": .int(t0 + Int64(i) * 300_000),
                              "device": .string("cli-full")])
        })
        let plain = try lookout(["sync", "home", "entries"], environment: env, timeout: 120)
        assertExit(plain, 0)

        let full = try lookout(["sync", "home", "entries", "--full", "--from", "2024-06-01", "--to", "2024-06-01T01:00:00Z"],
                               environment: env, timeout: 120)
        assertExit(full, 0)
        XCTAssertEqual(added("entries", in: full.stdout), 4, "\(full)")
        XCTAssertTrue(full.stdout.contains("entries: history missed 4 (reconciled with API v3); 0 mirrored no longer on the server"),
                      "\(full)")

        let again = try lookout(["sync", "home", "entries", "--full", "--from", "2024-06-01", "--to", "2024-06-01T01:00:00Z"],
                                environment: env, timeout: 120)
        assertExit(again, 0)
        XCTAssertEqual(added("entries", in: again.stdout), 0, "\(again)")
        XCTAssertTrue(again.stdout.contains("history missed 0"), "\(again)")

        // --from as a duration back from now implies --full (nothing in the last minute).
        let recent = try lookout(["sync", "home", "entries", "--from", "1m"], environment: env, timeout: 120)
        assertExit(recent, 0)
        XCTAssertTrue(recent.stdout.contains("history missed"), "\(recent)")
    }

    func testCtrlCStopsWithStatus130AndKeepsWholePages() async throws {
        let env = try await configure()
        let t0: Int64 = 1_719_792_000_000  // 2024-07-01T00:00:00Z
        await Self.simulator.seed("entries", (0..<2500).map { i in
            JSONValue.object(["type": .string("sgv"), "sgv": .int(100), "date": .int(t0 + Int64(i) * 1000),
                              "device": .string("cli-interrupt")])
        })
        await Self.simulator.inject(.latency(.milliseconds(1500)), count: nil, pathPrefix: "/api/v3/entries")
        let run = try launch(["sync", "home", "entries", "--full", "--from", "2024-07-01", "--to", "2024-07-02"], environment: env)
        let sawPage = run.waitForOutput(.stderr, containing: "entries: history page 1", timeout: 60)
        run.send(signal: SIGINT)
        let result = run.waitForExit(timeout: 60)
        await Self.simulator.clearFaults()
        XCTAssertTrue(sawPage)
        let interrupted = try XCTUnwrap(result)
        assertExit(interrupted, 130)
        XCTAssertTrue(interrupted.stderr.contains("sync interrupted"), "\(interrupted)")
        XCTAssertFalse(interrupted.stdout.contains("entries:"), "no summary for an interrupted collection: \(interrupted)")

        // Running it again completes the range.
        let resumed = try lookout(["sync", "home", "entries", "--full", "--from", "2024-07-01", "--to", "2024-07-02"],
                                  environment: env, timeout: 120)
        assertExit(resumed, 0)
        try writeFile("count.lua", """
            local nightscout = require "nightscout"
            local home = assert(nightscout.client "home")
            print(#assert(home:mirror("entries", { from = \(t0), to = \(t0 + 2_500_000) })))
            """)
        let count = try lookout(["run", "count.lua"], environment: env)
        XCTAssertEqual(count.stdout, "2500\n", "\(count)")
    }

    func testErrors() async throws {
        let env = try await configure()
        let unknown = try lookout(["sync", "nope"], environment: env)
        assertExit(unknown, 2)
        XCTAssertTrue(unknown.stderr.contains("no [nightscout.nope] profile"), "\(unknown)")
        XCTAssertTrue(unknown.stderr.contains("home"), "lists the known profiles: \(unknown)")

        let badCollection = try lookout(["sync", "home", "bogus"], environment: env)
        assertExit(badCollection, 2)
        XCTAssertTrue(badCollection.stderr.contains("unknown collection 'bogus'"), "\(badCollection)")

        let badTime = try lookout(["sync", "home", "--from", "yesterday"], environment: env)
        assertExit(badTime, 2)
        XCTAssertTrue(badTime.stderr.contains("--from"), "\(badTime)")

        // An API-secret profile cannot read v3 history: exit 1, and the secret is never shown.
        let legacy = try lookout(["sync", "legacy", "entries"], environment: env)
        assertExit(legacy, 1)
        XCTAssertTrue(legacy.stderr.contains("needs an access token"), "\(legacy)")
        XCTAssertFalse(legacy.stderr.contains(Self.secret) || legacy.stdout.contains(Self.secret))

        // A server that is down: exit 1 with the reason.
        try """
            [nightscout.down]
            url = "http://127.0.0.1:9"
            token_env = "NS_TOKEN"
            timeout = "5s"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let down = try lookout(["sync", "down", "entries"], environment: env, timeout: 60)
        assertExit(down, 1)
        XCTAssertTrue(down.stderr.hasPrefix("lookout: "), "\(down)")
        XCTAssertFalse(down.stderr.contains(env["NS_TOKEN"]!), "no secret in \(down)")
    }
}
