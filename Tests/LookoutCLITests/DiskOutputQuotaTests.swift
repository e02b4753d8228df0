import Foundation
import LookoutSim
import LookoutStore
import NightscoutKit
import XCTest

/// Issue 24 §3 with the real binary: what a script can make the host write (audit log, outbox,
/// log lines, the state database) stays within its quota, and a full database still lets the
/// guard decide and audit.
final class DiskOutputQuotaTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is only used from the test's own task.

    /// One simulator for the process, with a Loop profile so Remote 1.0 pushes are accepted.
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

    /// A live profile `loop` (2 U a command, 4 U an hour, override "Exercise") with `extra`
    /// config text before it.
    private func configure(_ extra: String = "") async throws -> [String: String] {
        let url = try await Self.started.url(of: Self.simulator)
        try """
            \(extra)
            [nightscout.loop]
            url = "\(url.absoluteString)"
            secret_env = "NS_SECRET"
            otp_url_env = "LOOP_OTP"
            remote = "live"
            max_bolus = 2
            max_bolus_per_hour = 4
            overrides = ["Exercise"]
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        return ["NS_SECRET": "this is my long pass phrase", "LOOP_OTP": Self.simulator.options.loop.otpURL]
    }

    private var databaseFile: String { home + "/state/lookout.sqlite3" }

    /// Bytes of the state database and its write-ahead log.
    private func databaseBytes() -> Int {
        [databaseFile, databaseFile + "-wal"].reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        }
    }

    /// Refused overrides with 1 MiB names, 40 the same and 40 each different: the audit log keeps
    /// short rows (names cut with a marker) and counts the repeats instead of writing them.
    func testRefusedCommandFloodStaysSmallInTheAuditLog() async throws {
        let env = try await configure()
        try writeFile("flood.lua", """
            local nightscout = require "nightscout"
            local loop = assert(nightscout.client "loop")
            local name = string.rep("x", 1 << 20)
            local refused = 0
            for i = 1, 40 do
              local r, err = loop:override(name, { wait = false })
              if not r then refused = refused + 1 end
              r, err = loop:override(name .. i, { wait = false })
              if not r then refused = refused + 1 end
            end
            print(refused)
            """)
        let run = try lookout(["run", "flood.lua"], environment: env, timeout: 120)
        assertExit(run, 0)
        XCTAssertEqual(run.stdout, "80\n")
        XCTAssertLessThan(databaseBytes(), 2 << 20, "80 refusals of 1 MiB names must not write megabytes")

        let audit = try lookout(["audit", "--limit", "1000"], environment: env)
        assertExit(audit, 0)
        let lines = audit.stdout.split(separator: "\n").map(String.init)
        let rows = lines.filter { $0.contains("  refused  ") && $0.contains("override x") }
        XCTAssertLessThanOrEqual(rows.count, 31, audit.stdout.prefix(4000).description)
        XCTAssertTrue(rows.allSatisfy { $0.utf8.count < 1200 }, "rows are short")
        XCTAssertTrue(audit.stdout.contains("…(+"), "cut names say how much was cut")
        let repeats = lines.compactMap { line -> Int? in
            guard line.hasPrefix("    repeated ") else { return nil }
            return Int(line.dropFirst("    repeated ".count).prefix { $0.isNumber })
        }
        XCTAssertEqual(rows.count + repeats.reduce(0, +), 80, "every refusal is counted:\n\(audit.stdout.prefix(4000))")
    }

    /// 50 uploads of 100 KiB to a site that is down, with a quota of 1 MiB: the quota's items
    /// are queued, the rest refused with `quota` naming the config key, and none is dropped.
    func testOutboxQuotaRefusesNewItemsAndDropsNone() async throws {
        let port = try freePort()
        try """
            [limits]
            outbox_bytes = "1MB"
            outbox_items = 100
            [nightscout.down]
            url = "http://127.0.0.1:\(port)"
            secret_env = "NS_SECRET"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let env = ["NS_SECRET": "this is my long pass phrase"]
        try writeFile("upload.lua", """
            local nightscout = require "nightscout"
            local down = assert(nightscout.client "down")
            local notes = string.rep("n", 100 * 1024)
            local queued, refused, message = 0, 0, nil
            for i = 1, 50 do
              local r, err = down:upload_treatment { eventType = "Note", notes = notes, date = 1717000000000 + i }
              if r then queued = queued + 1 else refused = refused + 1; message = message or (err.code .. ": " .. err.message) end
            end
            print(queued, refused)
            print(message)
            """)
        let run = try lookout(["run", "upload.lua"], environment: env, timeout: 120)
        assertExit(run, 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "10\t40", run.stdout)
        XCTAssertTrue(lines.last?.hasPrefix("quota: outbox quota exceeded") == true, run.stdout)
        XCTAssertTrue(run.stdout.contains("limits.outbox_bytes"), run.stdout)
        // The quota's 1 MiB, twice or so in the write-ahead log; without it 50 items were 15 MB.
        XCTAssertLessThan(databaseBytes(), 6 << 20)
        let outbox = try lookout(["outbox"], environment: env)
        XCTAssertEqual(outbox.stdout.split(separator: "\n").filter { $0.contains("  pending  ") }.count, 10, outbox.stdout)

        // The item quota, the same way.
        try """
            [limits]
            outbox_items = 3
            [nightscout.down]
            url = "http://127.0.0.1:\(port)"
            secret_env = "NS_SECRET"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        try writeFile("upload.lua", """
            local down = assert(require("nightscout").client "down")
            local r, err = down:upload_treatment { eventType = "Note", notes = "small", date = 1717000009999 }
            print(r, err.code, err.message)
            """)
        let more = try lookout(["run", "upload.lua"], environment: env)
        XCTAssertTrue(more.stdout.hasPrefix("nil\tquota\t"), more.stdout)
        XCTAssertTrue(more.stdout.contains("limits.outbox_items"), more.stdout)
        XCTAssertEqual(try lookout(["outbox"], environment: env).stdout.split(separator: "\n").filter { $0.contains("  pending  ") }.count, 10,
                       "nothing queued was dropped")
    }

    /// `log.info` and `print` of 1 MiB in a loop: lines cut to `log_line`, at most `log_burst`
    /// of them, and a "suppressed N lines" summary when the script writes again later.
    func testLogFloodIsCutAndRateLimited() async throws {
        try """
            [limits]
            log_line = "1KB"
            log_rate = 20
            log_burst = 10
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let run = try runScript("""
            local big = string.rep("y", 1 << 20)
            for i = 1, 100 do log.info(big) end
            for i = 1, 100 do print(big) end
            sleep(0.5)
            log.info("still here")
            """, timeout: 120)
        assertExit(run, 0)
        XCTAssertLessThan(run.stdout.utf8.count + run.stderr.utf8.count, 40 * 1024,
                          "200 MiB of lines must not reach the output")
        XCTAssertTrue(run.stderr.contains("…(+"), "cut lines say how much was cut")
        XCTAssertTrue(run.stderr.contains("suppressed ") && run.stderr.contains(" lines (over the output rate of 20 lines a second"),
                      run.stderr.suffix(2000).description)
        XCTAssertTrue(run.stderr.contains("still here"), run.stderr.suffix(2000).description)
    }

    /// A state database at its size limit: the script's own writes (store, upload) are refused
    /// with an error naming `state.max_size`, and the guard still allows, refuses and audits.
    func testFullDatabaseRefusesScriptWritesButTheGuardStillWorks() async throws {
        let env = try await configure("""
            [state]
            max_size = "1MB"
            """)
        let before = await Self.simulator.receivedLoopNotifications().count
        try writeFile("fill.lua", """
            local nightscout = require "nightscout"
            local store = require "store"
            local loop = assert(nightscout.client "loop")
            local chunk = string.rep("z", 64 * 1024)
            local message
            for i = 1, 200 do
              local ok, err = store.set("k" .. i, chunk)
              if not ok then message = err.code .. ": " .. err.message; break end
            end
            print(message)
            local r, err = loop:upload_treatment { eventType = "Note", notes = "x", date = 1717000000000 }
            print(r, err and err.code)
            print(assert(loop:bolus(2)).state)
            print(select(2, loop:bolus(5)).reason)
            """)
        let run = try lookout(["run", "fill.lua"], environment: env, timeout: 120)
        assertExit(run, 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4, run.stdout)
        XCTAssertTrue(lines[0].hasPrefix("quota: ") && lines[0].contains("state.max_size"), run.stdout)
        XCTAssertEqual(lines[1], "nil\tquota", run.stdout)
        XCTAssertTrue(["sent", "confirmed"].contains(lines[2]), run.stdout)
        XCTAssertEqual(lines[3], "exceedsMaximum", run.stdout)
        let pushed = await Self.simulator.receivedLoopNotifications().dropFirst(before).filter { $0.status == 200 && $0.push != nil }
        XCTAssertEqual(pushed.count, 1)
        let audit = try lookout(["audit"], environment: env).stdout
        XCTAssertTrue(audit.contains("attempted      bolus 2 U"), audit)
        XCTAssertTrue(audit.contains("refused        bolus 5 U"), audit)
        let doctor = try lookout(["doctor"], environment: env)
        XCTAssertTrue(doctor.stdout.contains("state size") && doctor.stdout.contains("state.max_size"), doctor.stdout)
    }

    /// `lookout audit` keeps a space after the longest phase: `indeterminate  bolus 1 U`.
    func testAuditSeparatesIndeterminateFromTheCommand() async throws {
        try FileManager.default.createDirectory(atPath: home + "/state", withIntermediateDirectories: true)
        let store = try StateStore(path: databaseFile)
        try await store.append(AuditEntry(
            ticketID: UUID(), time: Date(), site: "http://127.0.0.1:1", command: AuditCommand(.bolus(units: 1)),
            source: "bolus.lua", verdict: .allowed, phase: .indeterminate, detail: "timed out"))
        let audit = try lookout(["audit"])
        assertExit(audit, 0)
        XCTAssertTrue(audit.stdout.contains("indeterminate  bolus 1 U  by bolus.lua"), audit.stdout)
    }
}
