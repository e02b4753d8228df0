import Foundation
import GRDB
import LookoutConfig
import NightscoutKit

/// The durable upload queue (`outbox` table) behind NightscoutKit's `Outbox`.
extension StateStore: OutboxStore {
    /// Stores a new item; an item already queued under the same site and identifier is kept, and the stored one is returned.
    public func insert(_ item: OutboxItem) async throws -> OutboxItem {
        try await insertItem(item, quota: nil)
    }

    /// Stores a new item when its source stays within `quota` (counted in the same
    /// transaction); an item already queued is returned as stored.
    public func insert(_ item: OutboxItem, quota: OutboxQuota) async throws -> OutboxItem {
        try await insertItem(item, quota: quota)
    }

    private func insertItem(_ item: OutboxItem, quota: OutboxQuota?) async throws -> OutboxItem {
        try await write { db in
            if let quota, try StateStore.fetchOutboxItem(db, site: item.site, identifier: item.identifier) == nil {
                let row = try Row.fetchOne(db, sql: """
                    SELECT COUNT(*) AS n, COALESCE(SUM(length(body)), 0) AS bytes FROM outbox
                    WHERE source IS ? AND state != 'sent'
                    """, arguments: [item.source])
                try quota.check(item, queuedItems: row?["n"] ?? 0, queuedBytes: row?["bytes"] ?? 0)
            }
            try db.execute(sql: """
                INSERT INTO outbox (site, identifier, collection, body, source, created, state, attempts, next_attempt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (site, identifier) DO NOTHING
                """, arguments: [item.site, item.identifier, item.collectionName, item.body, item.source,
                                 item.created.timeIntervalSince1970, item.state.rawValue, item.attempts,
                                 item.nextAttempt.timeIntervalSince1970])
            return try StateStore.fetchOutboxItem(db, site: item.site, identifier: item.identifier) ?? item
        }
    }

    /// Writes an item's delivery state (state, attempts, next attempt, last error and status, sent
    /// time). A sent item's body is dropped: it keeps what `lookout outbox --all` shows.
    public func update(_ item: OutboxItem) async throws {
        try await write { db in
            try db.execute(sql: """
                UPDATE outbox SET state = ?, attempts = ?, next_attempt = ?, last_error = ?, last_status = ?,
                    sent_at = ?, deduplicated = ?, body = CASE WHEN ? = 'sent' THEN X'' ELSE body END
                WHERE site = ? AND identifier = ?
                """, arguments: [item.state.rawValue, item.attempts, item.nextAttempt.timeIntervalSince1970, item.lastError,
                                 item.lastStatus, item.sentAt?.timeIntervalSince1970, item.deduplicated, item.state.rawValue,
                                 item.site, item.identifier])
        }
    }

    /// The item with `identifier` on `site`; `nil` if there is none (or its state is unknown to this version).
    public func item(site: String, identifier: String) async throws -> OutboxItem? {
        try await access { db in try StateStore.fetchOutboxItem(db, site: site, identifier: identifier) }
    }

    /// Up to `limit` pending items of `site` whose next attempt is at or before `now`, oldest first.
    public func due(site: String, now: Date, limit: Int) async throws -> [OutboxItem] {
        try await access { db in
            try Row.fetchAll(db, sql: """
                SELECT * FROM outbox WHERE site = ? AND state = 'pending' AND next_attempt <= ?
                ORDER BY created, identifier LIMIT ?
                """, arguments: [site, now.timeIntervalSince1970, limit]).compactMap(StateStore.outboxItem)
        }
    }

    /// Up to `limit` items in any of `states`, oldest first, on `site` or on every site when `site` is `nil`.
    public func items(site: String?, states: Set<OutboxItem.State>, limit: Int) async throws -> [OutboxItem] {
        let stateList = states.map(\.rawValue).sorted()
        return try await access { db in
            let marks = Array(repeating: "?", count: stateList.count).joined(separator: ",")
            var arguments: [any DatabaseValueConvertible] = stateList
            var sql = "SELECT * FROM outbox WHERE state IN (\(marks))"
            if let site { sql += " AND site = ?"; arguments.append(site) }
            sql += " ORDER BY created, identifier LIMIT ?"
            arguments.append(limit)
            return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).compactMap(StateStore.outboxItem)
        }
    }

    /// Removes an item; `false` if there was none.
    public func delete(site: String, identifier: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM outbox WHERE site = ? AND identifier = ?", arguments: [site, identifier])
            return db.changesCount > 0
        }
    }

    private static func fetchOutboxItem(_ db: Database, site: String, identifier: String) throws -> OutboxItem? {
        try Row.fetchOne(db, sql: "SELECT * FROM outbox WHERE site = ? AND identifier = ?", arguments: [site, identifier])
            .flatMap(outboxItem)
    }

    /// A row as an item; `nil` for a row a newer Lookout wrote with a state this one does not
    /// know (left alone rather than misread). Any collection name is read: Nightscout uploads and
    /// other services' items (`northlight.feedback`) share the table, each queue sent by its own
    /// sender.
    static func outboxItem(_ row: Row) -> OutboxItem? {
        guard let collection: String = row["collection"], !collection.isEmpty,
              let state = OutboxItem.State(rawValue: row["state"]) else { return nil }
        var item = OutboxItem(identifier: row["identifier"], site: row["site"], collectionName: collection, body: row["body"],
                              source: row["source"], created: Date(timeIntervalSince1970: row["created"]))
        item.state = state
        item.attempts = row["attempts"]
        item.nextAttempt = Date(timeIntervalSince1970: row["next_attempt"])
        item.lastError = row["last_error"]
        item.lastStatus = row["last_status"]
        item.sentAt = (row["sent_at"] as Double?).map { Date(timeIntervalSince1970: $0) }
        item.deduplicated = row["deduplicated"]
        return item
    }
}

extension StateStore {
    /// An index for the outbox quota's count of one source's waiting items.
    static let outboxQuotaMigrations: [Migration] = [
        ("v7-outbox-source", { db in
            try db.execute(sql: "CREATE INDEX outbox_source ON outbox (source, state)")
        }),
    ]

    /// The outbox items with `identifier`, on any site (ids are UUIDs: normally one).
    public func outboxItems(identifier: String) async throws -> [OutboxItem] {
        try await access { db in
            try Row.fetchAll(db, sql: "SELECT * FROM outbox WHERE identifier = ? ORDER BY site", arguments: [identifier])
                .compactMap(StateStore.outboxItem)
        }
    }
}
