import Foundation
import GRDB
import LookoutConfig
import LookoutTestSupport
import NightscoutKit
import XCTest

@testable import LookoutStore

/// Issue 24 §3 on the store: a refusal made while another process holds the database's lock is
/// audited once the lock is gone; repeat counters cannot be rewritten; sent outbox items keep no
/// body; the outbox quota holds inside the insert.
final class AuditAndOutboxQuotaTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = NSTemporaryDirectory() + "/lookout-store-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: folder)
        super.tearDown()
    }

    /// Another process holds the write lock past `busyTimeout`: the guard refuses
    /// (`historyUnavailable`), and the refusal is in the audit log once the lock is released.
    func testRefusalWhileTheDatabaseIsLockedIsAudited() async throws {
        let path = folder + "/lookout.sqlite3"
        let store = try StateStore(path: path)
        let limits = TherapyLimits(maxBolusUnits: 2, maxBolusUnitsPerHour: 4, live: true)
        let guardian = try RemoteCommandGuard(limits: limits, ledger: store)
        // A second connection (as another process would) holding an exclusive transaction.
        let other = try DatabaseQueue(path: path)
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        let holder = Thread {
            try? other.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN EXCLUSIVE")
                holding.signal()
                release.wait()
                try db.execute(sql: "COMMIT")
            }
        }
        holder.start()
        holding.wait()
        let decision = await guardian.authorize(.bolus(units: 1), site: "http://ns.example", source: "locked.lua")
        release.signal()
        XCTAssertEqual(decision.refusal?.code, "historyUnavailable")

        let deadline = Date().addingTimeInterval(20)
        var rows: [AuditRecordRow] = []
        while Date() < deadline {
            rows = (try? await store.auditLog()) ?? []
            if !rows.isEmpty { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        XCTAssertEqual(rows.map(\.entry.reasonCode), ["historyUnavailable"])
        XCTAssertEqual(rows.first?.entry.source, "locked.lua")
    }

    /// Identical refusals are counted on the first row; the counter only grows and the rows
    /// themselves stay append-only.
    func testRepeatedRefusalsAreCountedAndCountersCannotShrink() async throws {
        let store = try StateStore()
        let name = String(repeating: "x", count: 4 << 20)
        let guardian = try RemoteCommandGuard(limits: TherapyLimits(allowedOverrides: ["Exercise"], live: true), ledger: store)
        for _ in 0..<50 {
            let decision = await guardian.authorize(.override(name: name, durationMinutes: nil), site: "http://ns.example", source: "flood.lua")
            XCTAssertEqual(decision.refusal?.code, "overrideNotAllowed")
        }
        let rows = try await store.auditLog()
        XCTAssertEqual(rows.count, 1)
        XCTAssertEqual(rows.first?.repeats, 49)
        let bytes = try await store.database.read { db in
            try Int.fetchOne(db, sql: "SELECT SUM(length(reason) + length(detail) + length(command)) FROM audit") ?? 0
        }
        XCTAssertLessThan(bytes, 4096, "a 4 MiB name is cut")
        XCTAssertTrue(rows.first?.entry.reason?.contains("…(+") == true)
        do {
            try await store.database.write { db in try db.execute(sql: "UPDATE audit_repeats SET count = 0") }
            XCTFail("a repeat counter was lowered")
        } catch {}
        do {
            try await store.database.write { db in try db.execute(sql: "DELETE FROM audit_repeats") }
            XCTFail("a repeat counter was deleted")
        } catch {}
    }

    /// A sent item keeps what `lookout outbox --all` shows, not its body.
    func testSentItemKeepsNoBody() async throws {
        let store = try StateStore()
        let outbox = Outbox(sender: AlwaysSends(), site: "test", store: store)
        let item = try await outbox.enqueue(collectionName: "test.items", identifier: "a", body: Data(repeating: 65, count: 100_000),
                                            source: "up.lua")
        let sent = await outbox.attempt(item.identifier)
        XCTAssertEqual(sent?.state, .sent)
        let stored = try await store.item(site: "test", identifier: "a")
        XCTAssertEqual(stored?.state, .sent)
        XCTAssertEqual(stored?.body.count, 0)
        XCTAssertEqual(stored?.source, "up.lua")
    }

    /// Two scripts each get their own quota; a full quota refuses without touching what is queued.
    func testOutboxQuotaIsPerScriptAndDropsNothing() async throws {
        let store = try StateStore()
        let quota = OutboxQuota(items: 2, bytes: nil)
        let outbox = Outbox(sender: AlwaysSends(), site: "test", store: store)
        for id in ["a", "b"] {
            _ = try await outbox.enqueue(collectionName: "t", identifier: id, body: Data("{}".utf8), source: "one.lua", quota: quota)
        }
        do {
            _ = try await outbox.enqueue(collectionName: "t", identifier: "c", body: Data("{}".utf8), source: "one.lua", quota: quota)
            XCTFail("over the quota")
        } catch {
            let info = (error as? StateStoreError)?.luaError
            XCTAssertEqual(info?.code, "quota")
            XCTAssertTrue(info?.message.contains("limits.outbox_items") == true, "\(error)")
        }
        _ = try await outbox.enqueue(collectionName: "t", identifier: "d", body: Data("{}".utf8), source: "two.lua", quota: quota)
        let items = try await store.items(site: nil, states: [.pending], limit: 10)
        XCTAssertEqual(items.map(\.identifier), ["a", "b", "d"])
    }
}

/// A sender that always succeeds.
private struct AlwaysSends: OutboxSender {
    func send(_ item: OutboxItem) async throws -> Bool { false }
}
