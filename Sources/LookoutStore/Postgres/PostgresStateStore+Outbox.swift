import Foundation
import LookoutConfig
import NightscoutKit
import PostgresNIO

/// The durable upload queue (`outbox`) on PostgreSQL, as `OutboxStore`.
extension PostgresStateStore: OutboxStore {
    /// Stores a new item; an item already queued under the same site and identifier is kept and returned.
    public func insert(_ item: OutboxItem) async throws -> OutboxItem {
        try await withConnection { [self] connection in try await self.insertItem(item, on: connection) }
    }

    /// Stores a new item when its source stays within `quota`: the source's waiting items are
    /// counted under a transaction-level advisory lock on the source, so two writers of one
    /// script cannot both slip under it; an item already queued is returned as stored.
    public func insert(_ item: OutboxItem, quota: OutboxQuota) async throws -> OutboxItem {
        try await transaction { [self] connection in
            try await self.execute("SELECT pg_advisory_xact_lock(hashtextextended(\("lookout.outbox:" + (item.source ?? "")), 0))",
                                   on: connection)
            if let existing = try await self.fetchOutboxItem(site: item.site, identifier: item.identifier, on: connection) {
                return existing
            }
            let row = try await self.rows("""
                SELECT count(*) AS n, COALESCE(sum(length(body)), 0)::bigint AS bytes FROM outbox
                WHERE source IS NOT DISTINCT FROM \(item.source) AND state <> 'sent'
                """, on: connection).first
            let count = try row.map { try $0["n"].decode(Int.self) } ?? 0
            let bytes = try row.map { try $0["bytes"].decode(Int.self) } ?? 0
            try quota.check(item, queuedItems: count, queuedBytes: bytes)
            return try await self.insertItem(item, on: connection)
        }
    }

    private func insertItem(_ item: OutboxItem, on connection: PostgresConnection) async throws -> OutboxItem {
        try await execute("""
            INSERT INTO outbox (site, identifier, collection, body, source, created, state, attempts, next_attempt)
            VALUES (\(item.site), \(item.identifier), \(item.collectionName), \(item.body), \(item.source),
                    \(item.created.timeIntervalSince1970), \(item.state.rawValue), \(item.attempts),
                    \(item.nextAttempt.timeIntervalSince1970))
            ON CONFLICT (site, identifier) DO NOTHING
            """, on: connection)
        return try await fetchOutboxItem(site: item.site, identifier: item.identifier, on: connection) ?? item
    }

    /// Writes an item's delivery state; a sent item's body is dropped (as in SQLite).
    public func update(_ item: OutboxItem) async throws {
        try await withConnection { [self] connection in
            try await self.execute("""
                UPDATE outbox SET state = \(item.state.rawValue), attempts = \(item.attempts),
                    next_attempt = \(item.nextAttempt.timeIntervalSince1970), last_error = \(item.lastError),
                    last_status = \(item.lastStatus), sent_at = \(item.sentAt?.timeIntervalSince1970),
                    deduplicated = \(item.deduplicated),
                    body = CASE WHEN \(item.state.rawValue) = 'sent' THEN ''::bytea ELSE body END
                WHERE site = \(item.site) AND identifier = \(item.identifier)
                """, on: connection)
        }
    }

    /// The item with `identifier` on `site`, or nil.
    public func item(site: String, identifier: String) async throws -> OutboxItem? {
        try await withConnection { [self] connection in
            try await self.fetchOutboxItem(site: site, identifier: identifier, on: connection)
        }
    }

    /// Up to `limit` pending items of `site` due at `now`, oldest first.
    public func due(site: String, now: Date, limit: Int) async throws -> [OutboxItem] {
        try await withConnection { [self] connection in
            try await self.rows("""
                SELECT * FROM outbox WHERE site = \(site) AND state = 'pending' AND next_attempt <= \(now.timeIntervalSince1970)
                ORDER BY created, identifier LIMIT \(limit)
                """, on: connection).compactMap(Self.outboxItem)
        }
    }

    /// Up to `limit` items in any of `states`, oldest first, on `site` or on every site.
    public func items(site: String?, states: Set<OutboxItem.State>, limit: Int) async throws -> [OutboxItem] {
        let list = states.map(\.rawValue).sorted()
        return try await withConnection { [self] connection in
            let rows = if let site {
                try await self.rows("""
                    SELECT * FROM outbox WHERE state = ANY(\(list)) AND site = \(site) ORDER BY created, identifier LIMIT \(limit)
                    """, on: connection)
            } else {
                try await self.rows("""
                    SELECT * FROM outbox WHERE state = ANY(\(list)) ORDER BY created, identifier LIMIT \(limit)
                    """, on: connection)
            }
            return rows.compactMap(Self.outboxItem)
        }
    }

    /// Removes an item; `false` if there was none.
    public func delete(site: String, identifier: String) async throws -> Bool {
        try await withConnection { [self] connection in
            try await self.execute("DELETE FROM outbox WHERE site = \(site) AND identifier = \(identifier) RETURNING 1", on: connection) > 0
        }
    }

    /// The outbox items with `identifier`, on any site.
    public func outboxItems(identifier: String) async throws -> [OutboxItem] {
        try await withConnection { [self] connection in
            try await self.rows("SELECT * FROM outbox WHERE identifier = \(identifier) ORDER BY site", on: connection)
                .compactMap(Self.outboxItem)
        }
    }

    private func fetchOutboxItem(site: String, identifier: String, on connection: PostgresConnection) async throws -> OutboxItem? {
        try await rows("SELECT * FROM outbox WHERE site = \(site) AND identifier = \(identifier)", on: connection)
            .first.flatMap(Self.outboxItem)
    }

    /// A row as an item; nil for a state this version does not know.
    static func outboxItem(_ row: PostgresRandomAccessRow) -> OutboxItem? {
        guard let collection = try? row["collection"].decode(String.self), !collection.isEmpty,
              let state = (try? row["state"].decode(String.self)).flatMap(OutboxItem.State.init(rawValue:)),
              let identifier = try? row["identifier"].decode(String.self), let site = try? row["site"].decode(String.self),
              let body = try? row["body"].decode(Data.self), let created = try? row["created"].decode(Double.self),
              let attempts = try? row["attempts"].decode(Int32.self), let next = try? row["next_attempt"].decode(Double.self)
        else { return nil }
        var item = OutboxItem(identifier: identifier, site: site, collectionName: collection, body: body,
                              source: (try? row["source"].decode(String?.self)) ?? nil, created: Date(timeIntervalSince1970: created))
        item.state = state
        item.attempts = Int(attempts)
        item.nextAttempt = Date(timeIntervalSince1970: next)
        item.lastError = (try? row["last_error"].decode(String?.self)) ?? nil
        item.lastStatus = ((try? row["last_status"].decode(Int32?.self)) ?? nil).map(Int.init)
        item.sentAt = ((try? row["sent_at"].decode(Double?.self)) ?? nil).map { Date(timeIntervalSince1970: $0) }
        item.deduplicated = (try? row["deduplicated"].decode(Bool?.self)) ?? nil
        return item
    }
}
