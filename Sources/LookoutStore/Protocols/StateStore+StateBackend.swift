import Foundation
import GRDB

/// The SQLite store as a `StateBackend`: its methods are the protocols' requirements; what only
/// the protocols added is here.
extension StateStore: StateBackend, ScriptValueStore, NotifyQueueStore, AlertStateStore, RemoteCommandAudit, MirrorStore {
    /// The database file, or `:memory:`.
    public var location: String { path ?? ":memory:" }

    /// The applied migrations, in order.
    public func appliedMigrations() async throws(StateStoreError) -> [String] {
        try await access { db in try StateStore.migrator.appliedMigrations(db) }
    }

    /// Claims up to `limit` due items in one write transaction (SQLite has one writer at a time,
    /// so two claimers cannot both take an item).
    public func claimDueNotifications(now: Date, limit: Int) async throws(StateStoreError) -> [NotifyItem] {
        let time = now.timeIntervalSince1970
        return try await write { db in
            let ids = try String.fetchAll(db, sql: """
                SELECT id FROM notify_outbox WHERE (state = 'pending' AND next_attempt <= ?)
                    OR (state = 'sending' AND claimed_at < ?) ORDER BY created, id LIMIT ?
                """, arguments: [time, time - StateStore.notifyClaimLease, limit])
            var claimed: [NotifyItem] = []
            for id in ids {
                try db.execute(sql: "UPDATE notify_outbox SET state = 'sending', claimed_at = ? WHERE id = ?", arguments: [time, id])
                if let item = try StateStore.fetchNotification(db, id: id) { claimed.append(item) }
            }
            return claimed
        }
    }
}
