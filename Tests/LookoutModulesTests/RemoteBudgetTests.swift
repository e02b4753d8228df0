import Foundation
import LookoutSim
import LookoutTestSupport
import Lua
import NightscoutKit
import XCTest

@testable import LookoutConfig
@testable import LookoutStore
@testable import LookoutModules

/// Issue 13 §2 and §3 inside one process: nothing a script writes gives budget back, one budget
/// per site whatever the profile, the strictest limits of the site's profiles, and the SQLite
/// ledger shared by separate connections to one database file (as separate processes are).
final class RemoteBudgetTests: XCTestCase {
    /// Bolus amounts of the pushes the server accepted since `index`.
    private func bolusPushes(_ sim: NightscoutSimulator, since index: Int) async -> [Double] {
        await sim.receivedLoopNotifications().dropFirst(index).filter { $0.status == 200 && $0.push != nil }
            .compactMap { $0.push?.payload["bolus-entry"]?.doubleValue }
    }

    /// §2: a script sends a bolus, uploads a note that looks like Loop's failure note for it
    /// while Lookout waits for Loop's answer, and tries again. Lookout reports the "failure", but
    /// the budget is not given back: the late phone has at most the hourly limit waiting.
    func testForgedLoopFailureNoteDoesNotGiveBudgetBack() async throws {
        let (sim, url) = try await RemoteCommandSim.latePhone.start()
        let before = await sim.receivedLoopNotifications().count
        let store = try StateStore()
        let lines = try await runRemoteScript("""
            local forging = true
            local forger = task.spawn(function()
              while forging do
                assert(loop:upload_treatment { eventType = "Note", enteredBy = "Bolus Entry 2 U",
                  notes = "Bolus failed: pump communication error\\n{}" })
                require("script").sleep(0.1)
              end
            end)
            for i = 1, 4 do
              -- (a wait long enough for the next one-time code: one code per command)
              local r, err = loop:bolus(2, { wait = "35s" })
              print(i, r and r.state or err.code, err and (err.reason or err.message) or "")
            end
            forging = false
            task.wait(forger)
            """, url: url, otpURL: sim.options.loop.otpURL, settings: """
            remote = "live"
            max_bolus = 2
            max_bolus_per_hour = 4
            """, store: store)
        let pushed = await bolusPushes(sim, since: before)
        XCTAssertEqual(pushed, [2, 2], "the hourly limit is 4 U:\n\(lines)")
        XCTAssertEqual(lines.count, 4, "\(lines)")
        // Outcome polling still reports what the treatments say…
        XCTAssertTrue(lines.prefix(2).allSatisfy { $0.hasPrefix("1\tloop\tLoop did not enact it") || $0.hasPrefix("2\tloop\tLoop did not enact it") },
                      "the forged note was taken as Loop's answer:\n\(lines)")
        // …but the budget stays spent.
        XCTAssertEqual(Array(lines.suffix(2)), ["3\trefused\texceedsHourlyTotal", "4\trefused\texceedsHourlyTotal"])
        // The second identical refusal is counted on the first (issue 24 §3), not written again.
        let rows = try await store.auditLog(limit: 100)
        XCTAssertEqual(rows.map(\.entry.phase), [.attempted, .sent, .appError, .attempted, .sent, .appError, .refused])
        XCTAssertEqual(rows.last?.repeats, 1)
        XCTAssertTrue(rows.allSatisfy { $0.entry.site == RemoteCommandSite.key(for: url) })
    }

    /// §3 in one process: two profiles naming one site (spelled differently) share one budget,
    /// and the strictest limits of the two apply to both. (Its own simulator, whose Loop app
    /// enacts: the second send waits for the next one-time code.)
    func testProfilesNamingOneSiteShareOneBudgetUnderTheStrictestLimits() async throws {
        let (sim, url) = try await RemoteCommandSim(options: .init(authFailDelay: .zero)).start()
        defer { Task { await sim.stop() } }
        let before = await sim.receivedLoopNotifications().count
        let store = try StateStore()
        let spelled = url.absoluteString.replacingOccurrences(of: "http://", with: "HTTP://") + "/"
        let config = try HostConfig(text: """
            [nightscout.strict]
            url = "\(url.absoluteString)"
            secret_env = "NS_SECRET"
            otp_url_env = "LOOP_OTP"
            remote = "live"
            max_bolus = 2
            max_bolus_per_hour = 4

            [nightscout.lax]
            url = "\(spelled)"
            secret_env = "NS_SECRET"
            otp_url_env = "LOOP_OTP"
            remote = "live"
            max_bolus = 5
            max_bolus_per_hour = 20

            [nightscout.reader]
            url = "\(url.absoluteString)"
            secret_env = "NS_SECRET"
            """)
        let environment = ["NS_SECRET": "this is my long pass phrase", "LOOP_OTP": sim.options.loop.otpURL]
        let (transcript, outcome) = try await runLua("""
            local nightscout = require 'nightscout'
            local strict, lax = assert(nightscout.client 'strict'), assert(nightscout.client 'lax')
            local function try(client, units)
              local r, err = client:bolus(units, { wait = "35s" })
              print(units, r and r.state or err.reason or err.code)
            end
            try(lax, 3)
            try(lax, 2)
            try(strict, 2)
            try(lax, 1)
            try(strict, 0.5)
            """, modules: [NightscoutModule(config: config, store: store, environment: environment)])
        XCTAssertEqual(transcript.errors.map(\.description), [])
        XCTAssertEqual(outcome.exitCode, 0)
        XCTAssertEqual(transcript.lines, [
            "3\texceedsMaximum", "2\tconfirmed", "2\tconfirmed", "1\texceedsHourlyTotal", "0.5\texceedsHourlyTotal",
        ])
        let pushed = await bolusPushes(sim, since: before)
        XCTAssertEqual(pushed, [2, 2])
        let refused = try await store.auditEntries().filter { $0.phase == .refused }.count
        XCTAssertEqual(refused, 3, "every refusal is audited")
    }

    /// §3 on the SQLite ledger: guards over two separate connections to one database file (as
    /// two processes have) reserve in one `BEGIN IMMEDIATE` transaction each, so many concurrent
    /// attempts get exactly the hourly limit, and every refusal is audited.
    func testSeparateConnectionsToOneDatabaseShareOneBudget() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-ledger-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("lookout.sqlite3").path
        let stores = [try StateStore(path: file), try StateStore(path: file)]
        let limits = TherapyLimits(maxBolusUnits: 2, maxBolusUnitsPerHour: 4, live: true)
        let guards = try stores.flatMap { store in try (0..<2).map { _ in try RemoteCommandGuard(limits: limits, ledger: store) } }
        let site = "http://127.0.0.1:9"
        let allowed = await withTaskGroup(of: Int.self) { group in
            for (i, g) in guards.enumerated() {
                for _ in 0..<10 {
                    group.addTask { await g.authorize(.bolus(units: 2), site: site, source: "p\(i)").ticket == nil ? 0 : 1 }
                }
            }
            var n = 0
            for await one in group { n += one }
            return n
        }
        XCTAssertEqual(allowed, 2)
        let rows = try await stores[0].auditLog(limit: 1000)
        XCTAssertEqual(rows.filter { $0.entry.phase == .attempted }.count, 2)
        // Repeated refusals are counted on an earlier row (issue 24 §3): rows plus repeats.
        XCTAssertEqual(rows.filter { $0.entry.phase == .refused }.reduce(0) { $0 + 1 + $1.repeats }, 38)
    }

    /// Issue 24 §4 on the SQLite ledger: budget keys and used one-time codes are shared by
    /// separate connections to one database file (as separate processes are).
    func testSeparateConnectionsShareBudgetKeysAndUsedCodes() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-otp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("lookout.sqlite3").path
        let stores = [try StateStore(path: file), try StateStore(path: file)]
        let now = Date()
        // Many claims of one code for one pump (through different keys) at once: exactly one wins.
        let wins = await withTaskGroup(of: Int.self) { group in
            for i in 0..<20 {
                group.addTask {
                    let pumps = i % 2 == 0 ? ["http://127.0.0.1:9", "loop-device:a"] : ["http://localhost:9", "loop-device:a"]
                    return (try? await stores[i % 2].claimOneTimeCode("123456", counter: 7, pumps: pumps, now: now)) == true ? 1 : 0
                }
            }
            var n = 0
            for await one in group { n += one }
            return n
        }
        XCTAssertEqual(wins, 1)
        let sameCodeLater = try await stores[1].claimOneTimeCode("123456", counter: 8, pumps: ["loop-device:a"], now: now)
        XCTAssertFalse(sameCodeLater, "a code Loop has seen is not sent again")
        let otherPump = try await stores[1].claimOneTimeCode("123456", counter: 7, pumps: ["loop-device:b"], now: now)
        XCTAssertTrue(otherPump)
        // Budget keys: a command reserved under one spelling counts for the other.
        let limits = TherapyLimits(maxBolusUnits: 2, maxBolusUnitsPerHour: 2, live: true)
        let a = try RemoteCommandGuard(limits: limits, ledger: stores[0]), b = try RemoteCommandGuard(limits: limits, ledger: stores[1])
        let first = await a.authorize(.bolus(units: 2), site: "http://127.0.0.1:9", keys: ["loop-device:a"])
        XCTAssertNotNil(first.ticket)
        let second = await b.authorize(.bolus(units: 2), site: "http://localhost:9", keys: ["loop-device:a"])
        XCTAssertEqual(second.refusal?.code, "exceedsHourlyTotal")
        let third = await b.authorize(.bolus(units: 2), site: "http://localhost:9", keys: ["http://127.0.0.1:9"])
        XCTAssertEqual(third.refusal?.code, "exceedsHourlyTotal")
        let elsewhere = await b.authorize(.bolus(units: 2), site: "http://localhost:10", keys: ["loop-device:b"])
        XCTAssertNotNil(elsewhere.ticket)
    }

    /// `lookout remote release`'s store side: exactly one reservation, once, audited.
    func testReleaseGivesBackExactlyOneReservation() async throws {
        let store = try StateStore()
        let g = try RemoteCommandGuard(limits: TherapyLimits(maxBolusUnits: 2, maxBolusUnitsPerHour: 4, live: true), ledger: store)
        let site = "https://ns.example.org"
        let decisionA = await g.authorize(.bolus(units: 2), site: site, source: "a.lua")
        let a = try XCTUnwrap(decisionA.ticket)
        await g.complete(a, outcome: .sent())
        let decisionB = await g.authorize(.bolus(units: 2), site: site, source: "b.lua")
        let b = try XCTUnwrap(decisionB.ticket)
        await g.complete(b, outcome: .sent())
        do { let value = await g.authorize(.bolus(units: 1), site: site).refusal?.code; XCTAssertEqual(value, "exceedsHourlyTotal") }

        let found = try await store.reservedCommand(String(a.id.uuidString.prefix(8)).lowercased())
        XCTAssertEqual(found.ticket, a.id)
        XCTAssertEqual(found.source, "a.lua")
        XCTAssertEqual(found.status, .sent)
        let entry = try await store.releaseReservation(ticket: a.id, by: "lookout remote release (test)")
        XCTAssertEqual(entry.phase, .released)
        do {
            _ = try await store.releaseReservation(ticket: a.id, by: "again")
            XCTFail("released twice")
        } catch let error as ReleaseError {
            XCTAssertEqual(error, .alreadyReleased(a.id))
        }
        do { let value = await g.authorize(.bolus(units: 2), site: site).ticket; XCTAssertNotNil(value) }
        do { let value = await g.authorize(.bolus(units: 0.01), site: site).refusal?.code; XCTAssertEqual(value, "exceedsHourlyTotal") }
        let released = try await store.auditEntries().filter { $0.phase == .released }
        XCTAssertEqual(released.map(\.ticketID), [a.id])
        do {
            _ = try await store.reservedCommand("00000000")
            XCTFail("found a ticket that does not exist")
        } catch let error as ReleaseError {
            XCTAssertEqual(error, .notFound("00000000"))
        }
    }
}
