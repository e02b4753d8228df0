import Foundation
import LookoutConfig
import NightscoutKit
import XCTest

@testable import LookoutStore

/// One backend under test: the store, and a way to run raw SQL against its database behind the
/// store's back (to show what the database itself refuses).
struct BackendUnderTest: Sendable {
    var store: any StateBackend
    var rawSQL: @Sendable (String) async throws -> Void
}

/// Every store behaviour, written once and run against both backends
/// (`StateBackendSQLiteTests`, `StateBackendPostgresTests`).
enum StateBackendBehaviour {
    static let now = Date(timeIntervalSince1970: 1_714_557_600)

    // MARK: Schema

    static func migrationsShareNames(_ b: BackendUnderTest) async throws {
        let applied = try await b.store.appliedMigrations()
        XCTAssertEqual(applied, StateStore.migrations.map(\.name), "the same named migrations on both backends")
        XCTAssertEqual(PostgresStateStore.migrations.map(\.name), StateStore.migrations.map(\.name))
    }

    // MARK: Key/value store

    static func keyValueRoundTrip(_ b: BackendUnderTest) async throws {
        let s = b.store
        try await s.setValue(Array("42".utf8), script: "a.lua", key: "count", quota: nil)
        try await s.setValue(Array("\"x\"".utf8), script: "a.lua", key: "b/2", quota: nil)
        try await s.setValue(Array("1".utf8), script: "a.lua", key: "b/1", quota: nil)
        try await s.setValue(Array("1".utf8), script: "a.lua", key: "B", quota: nil)
        try await s.setValue(Array("7".utf8), script: "other.lua", key: "count", quota: nil)
        let binary: [UInt8] = [0x22, 0xFF, 0x00, 0xC3, 0x22]  // not UTF-8, with a NUL: kept byte for byte
        try await s.setValue(binary, script: "a.lua", key: "raw", quota: nil)
        let count = try await s.value(script: "a.lua", key: "count")
        XCTAssertEqual(count, Array("42".utf8))
        let raw = try await s.value(script: "a.lua", key: "raw")
        XCTAssertEqual(raw, binary)
        let prefixed = try await s.keys(script: "a.lua", prefix: "b/")
        XCTAssertEqual(prefixed, ["b/1", "b/2"])
        let all = try await s.keys(script: "a.lua", prefix: "")
        XCTAssertEqual(all, ["B", "b/1", "b/2", "count", "raw"], "byte order (uppercase first)")
        let entries = try await s.entries(script: "other.lua")
        XCTAssertEqual(entries.map(\.key), ["count"])
        XCTAssertEqual(entries.map(\.value), [Array("7".utf8)])
        try await s.setValue(nil, script: "a.lua", key: "count", quota: nil)
        let gone = try await s.value(script: "a.lua", key: "count")
        XCTAssertNil(gone)
        // Compare-and-swap.
        let swapped = try await s.replaceValue(script: "a.lua", key: "b/1", expected: Array("1".utf8), with: Array("2".utf8), quota: nil)
        XCTAssertTrue(swapped)
        let stale = try await s.replaceValue(script: "a.lua", key: "b/1", expected: Array("1".utf8), with: Array("3".utf8), quota: nil)
        XCTAssertFalse(stale)
        let absent = try await s.replaceValue(script: "a.lua", key: "new", expected: nil, with: Array("1".utf8), quota: nil)
        XCTAssertTrue(absent)
        let value = try await s.value(script: "a.lua", key: "b/1")
        XCTAssertEqual(value, Array("2".utf8))
    }

    static func quotaRefusesAndWritesNothing(_ b: BackendUnderTest) async throws {
        let s = b.store
        let quota = StoreQuota(bytes: 20)
        try await s.setValue(Array("123456789".utf8), script: "q.lua", key: "a", quota: quota)  // 10 bytes
        do {
            try await s.setValue(Array("1234567890123".utf8), script: "q.lua", key: "b", quota: quota)  // +14 > 20
            XCTFail("a write over the quota was accepted")
        } catch let error as StateStoreError {
            XCTAssertEqual(error.code, "quota")
            XCTAssertTrue(error.description.contains("store quota exceeded"), error.description)
        }
        let b2 = try await s.value(script: "q.lua", key: "b")
        XCTAssertNil(b2, "nothing written")
        // A write that shrinks what the script keeps is allowed even when over the quota.
        try await s.setValue(Array("1".utf8), script: "q.lua", key: "a", quota: StoreQuota(bytes: 1))
        let a = try await s.value(script: "q.lua", key: "a")
        XCTAssertEqual(a, Array("1".utf8))
    }

    /// Concurrent writers of one script: all of them together never take it over its quota.
    static func quotaHoldsUnderConcurrentWriters(_ b: BackendUnderTest) async throws {
        let s = b.store
        let quota = StoreQuota(bytes: 100)
        let value = [UInt8](repeating: UInt8(ascii: "7"), count: 28)  // key k00..k15 (3) + 28 = 31 bytes each: 3 fit
        let accepted = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<16 {
                group.addTask {
                    do {
                        try await s.setValue(value, script: "race.lua", key: String(format: "k%02d", i), quota: quota)
                        return true
                    } catch { return false }
                }
            }
            var n = 0
            for await ok in group where ok { n += 1 }
            return n
        }
        let kept = try await s.entries(script: "race.lua")
        let bytes = kept.reduce(0) { $0 + $1.key.utf8.count + $1.value.count }
        XCTAssertEqual(accepted, 3, "exactly the writes that fit")
        XCTAssertEqual(kept.count, 3)
        XCTAssertLessThanOrEqual(bytes, 100)
    }

    // MARK: Notification queue

    static func message(_ id: String, channel: String = "phone") -> NotifyMessage {
        NotifyMessage(id: id, channel: channel, title: "Low", message: "Low: 3.1 mmol/L", severity: "urgent",
                      alertID: "low", kind: "firing", time: 1_714_557_600_000, source: "alerts.lua")
    }

    static func notifyQueueLifecycle(_ b: BackendUnderTest) async throws {
        let s = b.store
        let first = try await s.insertNotification(message("n1"), now: now)
        XCTAssertEqual(first.state, .pending)
        var changed = message("n1")
        changed.message = "something else"
        let again = try await s.insertNotification(changed, now: now + 5)
        XCTAssertEqual(again.message.message, "Low: 3.1 mmol/L", "queued once: the stored item wins")
        let due = try await s.dueNotifications(now: now, limit: 10)
        XCTAssertEqual(due, ["n1"])
        let next = try await s.nextNotificationDue()
        XCTAssertEqual(next, now)
        guard var claimed = try await s.claimNotification(id: "n1", now: now, force: false) else {
            return XCTFail("the pending item was not claimed")
        }
        XCTAssertEqual(claimed.state, .sending)
        let twice = try await s.claimNotification(id: "n1", now: now + 1, force: true)
        XCTAssertNil(twice, "a claimed item is not claimed again while its claim holds")
        let expired = try await s.claimNotification(id: "n1", now: now + StateStore.notifyClaimLease + 1, force: false)
        XCTAssertNotNil(expired, "a claim whose sender died expires")
        claimed.state = .failed
        claimed.attempts = 1
        claimed.lastError = "HTTP 400"
        claimed.lastStatus = 400
        try await s.finishNotification(claimed)
        let failed = try await s.notifications(states: [.failed], limit: 10)
        XCTAssertEqual(failed.map(\.id), ["n1"])
        XCTAssertEqual(failed.first?.lastStatus, 400)
        XCTAssertEqual(failed.first?.lastError, "HTTP 400")
        let retried = try await s.retryNotification(id: "n1", now: now + 10)
        XCTAssertTrue(retried)
        let pending = try await s.notification(id: "n1")
        XCTAssertEqual(pending?.state, .pending)
        let missing = try await s.retryNotification(id: "nope", now: now)
        XCTAssertFalse(missing)
        let dropped = try await s.dropNotification(id: "n1")
        XCTAssertTrue(dropped)
        let droppedAgain = try await s.dropNotification(id: "n1")
        XCTAssertFalse(droppedAgain)
    }

    /// Many claimers at once: every item is claimed exactly once, by exactly one of them.
    static func claimsAreExclusive(_ b: BackendUnderTest) async throws {
        let s = b.store
        for i in 0..<40 { _ = try await s.insertNotification(message(String(format: "m%02d", i)), now: now + Double(i) / 100) }
        // One item, eight claimers: one wins.
        let winners = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    do { return try await s.claimNotification(id: "m00", now: now + 1, force: false) != nil } catch { return false }
                }
            }
            var n = 0
            for await won in group where won { n += 1 }
            return n
        }
        XCTAssertEqual(winners, 1, "two claimers never get the same item")
        // The rest, claimed in batches by six claimers at once.
        let claimed = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<6 {
                group.addTask {
                    var mine: [String] = []
                    while true {
                        let batch = try await s.claimDueNotifications(now: now + 1, limit: 3)
                        if batch.isEmpty { return mine }
                        mine += batch.map(\.id)
                    }
                }
            }
            var all: [String] = []
            for try await ids in group { all += ids }
            return all
        }
        XCTAssertEqual(claimed.count, 39, "every other item claimed")
        XCTAssertEqual(Set(claimed).count, claimed.count, "no item claimed twice")
        XCTAssertFalse(claimed.contains("m00"))
    }

    // MARK: Remote-command ledger and audit

    static func bolus(_ units: Double) -> AuditCommand { AuditCommand(.bolus(units: units)) }

    /// A guard's decision in miniature: allowed while the site's in-flight and sent boluses of the
    /// last hour stay within `budget` units.
    static func reserveBolus(_ s: any StateBackend, site: String, keys: [String] = [], units: Double, budget: Double,
                             at time: Date) async throws -> Bool
    {
        try await s.reserve(site: site, keys: keys, window: 3600, now: time) { records, now in
            let used = records.filter { $0.status == .inFlight || $0.status == .sent }.reduce(0) { $0 + ($1.command.amount ?? 0) }
            if used + units <= budget {
                let entry = AuditEntry(ticketID: UUID(), time: now, site: site, command: bolus(units), source: "test.lua",
                                       verdict: .allowed, phase: .attempted, detail: "bolus \(units) U")
                return (entry, true)
            }
            let entry = AuditEntry(ticketID: nil, time: now, site: site, command: bolus(units), source: "test.lua",
                                   verdict: .refused, reasonCode: "hourly_limit", reason: "over \(budget) U/h",
                                   phase: .refused, detail: "bolus \(units) U")
            return (entry, false)
        }
    }

    /// N concurrent reservations against one site's budget: never over it; every refusal audited.
    static func ledgerBudgetHoldsUnderConcurrency(_ b: BackendUnderTest) async throws {
        let s = b.store
        let site = "https://ns.example"
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<16 {
                group.addTask { try await reserveBolus(s, site: site, units: 1, budget: 4, at: now) }
            }
            // Another site has its own budget.
            group.addTask { try await reserveBolus(s, site: "https://other.example", units: 4, budget: 4, at: now) }
            var outcomes: [Bool] = []
            for try await ok in group { outcomes.append(ok) }
            return outcomes
        }
        XCTAssertEqual(results.filter { $0 }.count, 5, "4 × 1 U on one site, 4 U on the other")
        let records = try await s.recentCommands(site: site, since: now - 3600)
        XCTAssertEqual(records.count, 4)
        XCTAssertLessThanOrEqual(records.reduce(0) { $0 + ($1.command.amount ?? 0) }, 4)
        let log = try await s.auditLog(site: site, limit: 100)
        XCTAssertEqual(log.reduce(0) { $0 + 1 + $1.repeats }, 16, "every attempt and refusal is in the audit log")
        XCTAssertEqual(log.filter { $0.entry.verdict == .refused }.reduce(0) { $0 + 1 + $1.repeats }, 12,
                       "identical refusals counted on one row (AuditRepeats)")
    }

    static func releaseGivesBudgetBackOnce(_ b: BackendUnderTest) async throws {
        let s = b.store
        let site = "https://ns.example"
        let allowed = try await reserveBolus(s, site: site, units: 4, budget: 4, at: now)
        XCTAssertTrue(allowed)
        let over = try await reserveBolus(s, site: site, units: 1, budget: 4, at: now + 60)
        XCTAssertFalse(over)
        guard let ticket = try await s.recentCommands(site: site, since: now - 1).first?.ticketID else {
            return XCTFail("no reservation recorded")
        }
        let found = try await s.reservedCommand(String(ticket.uuidString.prefix(8)).lowercased())
        XCTAssertEqual(found.ticket, ticket)
        XCTAssertEqual(found.status, .inFlight)
        let released = try await s.releaseReservation(ticket: ticket, by: "anna", now: now + 120)
        XCTAssertEqual(released.phase, .released)
        do {
            _ = try await s.releaseReservation(ticket: ticket, by: "anna", now: now + 130)
            XCTFail("released twice")
        } catch let error as ReleaseError {
            XCTAssertEqual(error, .alreadyReleased(ticket))
        }
        let afterRelease = try await reserveBolus(s, site: site, units: 1, budget: 4, at: now + 180)
        XCTAssertTrue(afterRelease, "the released reservation no longer counts")
    }

    /// The database itself refuses to change or remove audit rows (not only the code).
    static func auditIsAppendOnlyInTheDatabase(_ b: BackendUnderTest) async throws {
        let s = b.store
        try await s.append(AuditEntry(ticketID: nil, time: now, site: "https://ns.example", command: bolus(1), source: "x.lua",
                                      verdict: .refused, reasonCode: "r", reason: "r", phase: .refused, detail: "d"))
        for sql in ["UPDATE audit SET detail = 'rewritten'", "DELETE FROM audit"] {
            do {
                try await b.rawSQL(sql)
                XCTFail("the database accepted: \(sql)")
            } catch {
                XCTAssertTrue(String(describing: error).contains("append-only"), "\(sql): \(error)")
            }
        }
        let entries = try await s.auditEntries(site: nil, limit: 10)
        XCTAssertEqual(entries.map(\.detail), ["d"])
    }

    // MARK: Alerts

    static func status(_ id: String, state: String, episode: Int64) -> AlertStatus {
        AlertStatus(id: id, script: "alerts.lua", title: "Low", severity: "urgent", state: state, since: now, episode: episode,
                    updatedAt: now)
    }

    static func acksBelongToTheirEpisode(_ b: BackendUnderTest) async throws {
        let s = b.store
        try await s.saveAlert(status("low", state: "firing", episode: 1), data: "{\"n\":1}", now: now)
        try await s.saveAlert(status("high", state: "ok", episode: 0), data: "{}", now: now)
        let acked = try await s.ackAlert(id: "low", by: "anna", at: now + 10, episode: nil)
        XCTAssertEqual(acked.ackedBy, "anna")
        let second = try await s.ackAlert(id: "low", by: "ben", at: now + 20, episode: nil)
        XCTAssertEqual(second.ackedBy, "anna", "the first acknowledgement of an episode wins")
        XCTAssertEqual(second.ackedAt, now + 10)
        do {
            _ = try await s.ackAlert(id: "high", by: "anna", at: now, episode: nil)
            XCTFail("acknowledged an alert that is not alerting")
        } catch let error as AlertAckError {
            XCTAssertEqual(error, .notAlerting("high", state: "ok"))
        }
        do {
            _ = try await s.ackAlert(id: "nope", by: "anna", at: now, episode: nil)
            XCTFail("acknowledged an unknown alert")
        } catch let error as AlertAckError {
            XCTAssertEqual(error, .unknown("nope", known: ["high", "low"]))
        }
        let record = try await s.alertRecord(id: "low")
        XCTAssertEqual(record?.data, "{\"n\":1}")
        XCTAssertEqual(record?.status.ackedBy, "anna")
        // A new episode is not acknowledged.
        try await s.saveAlert(status("low", state: "firing", episode: 2), data: "{}", now: now + 60)
        let list = try await s.alertStatuses()
        XCTAssertEqual(list.map(\.id), ["high", "low"])
        XCTAssertNil(list.last?.ackedBy)
        XCTAssertEqual(list.last?.episode, 2)
    }

    /// Snoozes from outside a script (`lookout ack --snooze`, the web view): of the current
    /// episode, a later one replacing an earlier one, none on the next episode. Leaves one in place.
    static func snoozesBelongToTheirEpisode(_ b: BackendUnderTest) async throws {
        let s = b.store
        try await s.saveAlert(status("snoozy", state: "firing", episode: 3), data: "{}", now: now)
        let first = try await s.snoozeAlert(id: "snoozy", by: "ben", at: now + 5, until: now + 905)
        XCTAssertEqual(first.snoozedBy, "ben")
        XCTAssertEqual(first.snoozedUntil, now + 905)
        let again = try await s.snoozeAlert(id: "snoozy", by: "cleo", at: now + 10, until: now + 1810)
        XCTAssertEqual(again.snoozedBy, "cleo", "a later snooze of the episode replaces the earlier one")
        let record = try await s.alertRecord(id: "snoozy")
        XCTAssertEqual(record?.status.snoozedUntil, now + 1810)
        XCTAssertEqual(record?.status.snoozedAt, now + 10)
        let listed = try await s.alertStatuses().first { $0.id == "snoozy" }
        XCTAssertEqual(listed?.snoozedBy, "cleo")
        XCTAssertEqual(listed?.snoozedUntil, now + 1810)
        try await s.saveAlert(status("calm", state: "ok", episode: 0), data: "{}", now: now)
        do {
            _ = try await s.snoozeAlert(id: "calm", by: "ben", at: now, until: now + 60)
            XCTFail("snoozed an alert that is not alerting")
        } catch let error as AlertAckError {
            XCTAssertEqual(error, .notAlerting("calm", state: "ok"))
        }
        // The next episode is not snoozed.
        try await s.saveAlert(status("snoozy", state: "firing", episode: 4), data: "{}", now: now + 60)
        let next = try await s.alertRecord(id: "snoozy")
        XCTAssertNil(next?.status.snoozedBy)
        XCTAssertNil(next?.status.snoozedUntil)
        _ = try await s.snoozeAlert(id: "snoozy", by: "ben", at: now + 70, until: now + 970)
    }

    // MARK: Outbox

    static func outboxQueue(_ b: BackendUnderTest) async throws {
        let s = b.store
        let site = "https://ns.example"
        var item = OutboxItem(identifier: "u1", site: site, collection: .treatments, body: Data("{\"a\":1}".utf8),
                              source: "bridge.lua", created: now)
        item.nextAttempt = now
        let stored = try await s.insert(item)
        XCTAssertEqual(stored.body, item.body)
        var other = item
        other.body = Data("{\"a\":2}".utf8)
        let kept = try await s.insert(other)
        XCTAssertEqual(kept.body, item.body, "queued once")
        var second = OutboxItem(identifier: "u2", site: site, collection: .entries, body: Data("{}".utf8), source: nil,
                                created: now + 1)
        second.nextAttempt = now + 100
        _ = try await s.insert(second)
        let due = try await s.due(site: site, now: now, limit: 10)
        XCTAssertEqual(due.map(\.identifier), ["u1"])
        var failed = stored
        failed.state = .failed
        failed.attempts = 3
        failed.lastError = "HTTP 422"
        failed.lastStatus = 422
        failed.deduplicated = true
        try await s.update(failed)
        let back = try await s.item(site: site, identifier: "u1")
        XCTAssertEqual(back?.state, .failed)
        XCTAssertEqual(back?.attempts, 3)
        XCTAssertEqual(back?.lastStatus, 422)
        XCTAssertEqual(back?.deduplicated, true)
        let pendingOrFailed = try await s.items(site: nil, states: [.pending, .failed], limit: 10)
        XCTAssertEqual(pendingOrFailed.map(\.identifier), ["u1", "u2"])
        let byIdentifier = try await s.outboxItems(identifier: "u2")
        XCTAssertEqual(byIdentifier.map(\.site), [site])
        let deleted = try await s.delete(site: site, identifier: "u1")
        XCTAssertTrue(deleted)
        let deletedAgain = try await s.delete(site: site, identifier: "u1")
        XCTAssertFalse(deletedAgain)
    }

    // MARK: Sync mirror

    static func doc(_ id: String, date: Int64?, srv: Int64? = nil, valid: Bool = true) -> MirrorDocument {
        var fields = ["\"identifier\":\"\(id)\""]
        if let date { fields.append("\"date\":\(date)") }
        if !valid { fields.append("\"isValid\":false") }
        return MirrorDocument(identifier: id, date: date, srvModified: srv, isValid: valid,
                              raw: Data(("{" + fields.joined(separator: ",") + "}").utf8))
    }

    static func mirror(_ b: BackendUnderTest) async throws {
        let s = b.store
        let site = "https://ns.example"
        let t0: Int64 = 1_714_557_600_000
        let none = try await s.cursor(site: site, collection: .entries)
        XCTAssertNil(none)
        var cursor = HistoryCursor()
        _ = cursor.accept(srvModified: t0 + 5, identifier: "e5")
        try await s.apply(site: site, collection: .entries, documents: [
            doc("e1", date: t0, srv: t0 + 1), doc("e2", date: t0 + 300_000), doc("e3", date: t0 + 600_000, valid: false),
            doc("e4", date: t0 + 900_000), doc("e5", date: t0 + 900_000), doc("nodate", date: nil),
        ], cursor: cursor)
        let back = try await s.cursor(site: site, collection: .entries)
        XCTAssertEqual(back, cursor)
        func ids(_ data: [Data]) -> [String] {
            data.compactMap { (try? JSONSerialization.jsonObject(with: $0)) as? [String: Any] }.compactMap { $0["identifier"] as? String }
        }
        let all = try await s.documents(site: site, collection: .entries, from: nil, through: nil, limit: nil, includeDeleted: false)
        XCTAssertEqual(ids(all), ["e5", "e4", "e2", "e1"])
        let withDeleted = try await s.documents(site: site, collection: .entries, from: nil, through: nil, limit: nil,
                                                includeDeleted: true)
        XCTAssertEqual(ids(withDeleted), ["e5", "e4", "e3", "e2", "e1"])
        let limited = try await s.documents(site: site, collection: .entries, from: t0, through: nil, limit: 2, includeDeleted: false)
        XCTAssertEqual(ids(limited), ["e5", "e4"])
        let identifiers = try await s.identifiers(site: site, collection: .entries, from: t0, through: t0 + 600_000)
        XCTAssertEqual(identifiers, ["e1", "e2"])
        let states = try await s.states(site: site, collection: .entries, identifiers: ["e1", "e3", "missing"])
        XCTAssertEqual(states, ["e1": MirrorState(srvModified: t0 + 1, isValid: true), "e3": MirrorState(srvModified: nil, isValid: false)])
        // An upsert replaces; the count includes tombstones and undated documents.
        try await s.apply(site: site, collection: .entries, documents: [doc("e1", date: t0, srv: t0 + 9, valid: false)], cursor: nil)
        let after = try await s.states(site: site, collection: .entries, identifiers: ["e1"])
        XCTAssertEqual(after["e1"], MirrorState(srvModified: t0 + 9, isValid: false))
        let count = try await s.mirrorCount(site: site, collection: .entries)
        XCTAssertEqual(count, 6)
        let stillCursor = try await s.cursor(site: site, collection: .entries)
        XCTAssertEqual(stillCursor, cursor, "a page without a cursor keeps the stored one")
    }

    // MARK: Budget keys, one-time codes, audit repeats, outbox quota

    /// Sites sharing a budget key (a Loop device) share one budget, also under concurrency, and
    /// keys linked through a command are followed transitively.
    static func budgetKeysShareOneBudget(_ b: BackendUnderTest) async throws {
        let s = b.store
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<16 {
                let site = i % 2 == 0 ? "https://a.example" : "https://b.example"
                group.addTask { try await reserveBolus(s, site: site, keys: ["loop:device1"], units: 1, budget: 4, at: now) }
            }
            var outcomes: [Bool] = []
            for try await ok in group { outcomes.append(ok) }
            return outcomes
        }
        XCTAssertEqual(results.filter { $0 }.count, 4, "two spellings of one pump share its 4 U")
        // c ─k1─ d ─k2─ e: e's budget holds c's bolus (linked through d's).
        let c = try await reserveBolus(s, site: "https://c.example", keys: ["k1"], units: 2, budget: 4, at: now)
        let d = try await reserveBolus(s, site: "https://d.example", keys: ["k1", "k2"], units: 1, budget: 4, at: now + 1)
        XCTAssertTrue(c && d)
        let tooMuch = try await reserveBolus(s, site: "https://e.example", keys: ["k2"], units: 2, budget: 4, at: now + 2)
        XCTAssertFalse(tooMuch, "3 U already used through linked keys")
        let fits = try await reserveBolus(s, site: "https://e.example", keys: ["k2"], units: 1, budget: 4, at: now + 3)
        XCTAssertTrue(fits)
        let unrelated = try await reserveBolus(s, site: "https://f.example", keys: ["k3"], units: 4, budget: 4, at: now + 4)
        XCTAssertTrue(unrelated, "an unlinked pump has its own budget")
    }

    /// A one-time code is claimed once per pump and time step, by one of many concurrent claimers.
    static func oneTimeCodeClaimedOnce(_ b: BackendUnderTest) async throws {
        let s = b.store
        let claims = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 { group.addTask { try await s.claimOneTimeCode("123456", counter: 100, pumps: ["p1", "p2"], now: now) } }
            var outcomes: [Bool] = []
            for try await ok in group { outcomes.append(ok) }
            return outcomes
        }
        XCTAssertEqual(claims.filter { $0 }.count, 1)
        let sameStep = try await s.claimOneTimeCode("654321", counter: 100, pumps: ["p2"], now: now + 1)
        XCTAssertFalse(sameStep, "one code per time step and pump")
        let sameCode = try await s.claimOneTimeCode("123456", counter: 101, pumps: ["p1"], now: now + 30)
        XCTAssertFalse(sameCode, "a code is not sent twice to a pump")
        let otherPump = try await s.claimOneTimeCode("123456", counter: 100, pumps: ["p3"], now: now + 1)
        XCTAssertTrue(otherPump)
        let later = try await s.claimOneTimeCode("123456", counter: 100, pumps: ["p1"],
                                                  now: now + RemoteCommandOTP.reuseWindow + 60)
        XCTAssertTrue(later, "forgotten after the reuse window")
    }

    /// A repeated refusal is counted on the first row; the database refuses lowering or removing counts.
    static func auditRepeatsOnlyGrow(_ b: BackendUnderTest) async throws {
        let s = b.store
        func refusal(_ time: Date) -> AuditEntry {
            AuditEntry(ticketID: nil, time: time, site: "https://ns.example", command: bolus(9), source: "x.lua",
                       verdict: .refused, reasonCode: "hourly_limit", reason: "over", phase: .refused, detail: "bolus 9 U")
        }
        try await s.append(refusal(now))
        try await s.append(refusal(now + 5))
        try await s.append(refusal(now + 9))
        let log = try await s.auditLog(site: nil, limit: 10)
        XCTAssertEqual(log.count, 1)
        XCTAssertEqual(log.first?.repeats, 2)
        XCTAssertEqual(log.first?.lastRepeat, now + 9)
        for sql in ["UPDATE audit_repeats SET count = 0", "DELETE FROM audit_repeats"] {
            do {
                try await b.rawSQL(sql)
                XCTFail("the database accepted: \(sql)")
            } catch {
                let text = String(describing: error)
                XCTAssertTrue(text.contains("only grow") || text.contains("append-only"), "\(sql): \(text)")
            }
        }
        let after = try await s.auditLog(site: nil, limit: 10)
        XCTAssertEqual(after.first?.repeats, 2)
    }

    /// One script's waiting items stay within its quota (sent items do not count and keep no body).
    static func outboxQuotaPerScript(_ b: BackendUnderTest) async throws {
        let s = b.store
        let site = "https://ns.example"
        let quota = OutboxQuota(items: 2, bytes: nil)
        func item(_ id: String, _ source: String) -> OutboxItem {
            OutboxItem(identifier: id, site: site, collection: .treatments, body: Data("{\"id\":\"\(id)\"}".utf8),
                       source: source, created: now)
        }
        let first = try await s.insert(item("q1", "a.lua"), quota: quota)
        _ = try await s.insert(item("q2", "a.lua"), quota: quota)
        _ = try await s.insert(item("q1", "a.lua"), quota: quota)  // already queued: returned, not counted
        do {
            _ = try await s.insert(item("q3", "a.lua"), quota: quota)
            XCTFail("a third item went past the quota")
        } catch let error as StateStoreError {
            XCTAssertEqual(error.code, "quota", error.description)
        }
        let third = try await s.item(site: site, identifier: "q3")
        XCTAssertNil(third, "nothing stored past the quota")
        _ = try await s.insert(item("q4", "b.lua"), quota: quota)  // another script has its own
        var sent = first
        sent.state = .sent
        sent.sentAt = now + 1
        try await s.update(sent)
        let back = try await s.item(site: site, identifier: "q1")
        XCTAssertEqual(back?.state, .sent)
        XCTAssertEqual(back?.body, Data(), "a sent item keeps no body")
        _ = try await s.insert(item("q3", "a.lua"), quota: quota)  // room again once one was sent
    }

    /// An ack link acknowledges its own episode once.
    static func ackLinkEpisode(_ b: BackendUnderTest) async throws {
        let s = b.store
        try await s.saveAlert(status("low", state: "firing", episode: 3), data: "{\"why\":\"below 70\"}", now: now)
        do {
            _ = try await s.ackAlert(id: "low", by: "anna", at: now, episode: 2)
            XCTFail("acknowledged another episode")
        } catch let error as AlertAckError {
            XCTAssertEqual(error, .otherEpisode("low", link: 2, current: 3))
        }
        let acked = try await s.ackAlert(id: "low", by: "anna", at: now, episode: 3)
        XCTAssertEqual(acked.ackedBy, "anna")
        XCTAssertEqual(acked.why, "below 70")
        do {
            _ = try await s.ackAlert(id: "low", by: "ben", at: now, episode: 3)
            XCTFail("acknowledged an episode twice through its link")
        } catch let error as AlertAckError {
            XCTAssertEqual(error, .alreadyAcked("low", episode: 3, by: "anna"))
        }
    }
}
