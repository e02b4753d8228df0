import Foundation
import GRDB
import NightscoutKit

extension StateStore {
    /// The sync mirror's tables.
    static let syncMigrations: [Migration] = [
        ("v3-sync", { db in
            // NightscoutKit `SyncStore`: one history cursor (JSON of `HistoryCursor`) per site and
            // collection, and the mirrored documents as the server's raw JSON plus index fields.
            try db.execute(sql: """
                CREATE TABLE sync_cursor (
                    site TEXT NOT NULL,
                    collection TEXT NOT NULL,
                    cursor TEXT NOT NULL,
                    updated_at REAL NOT NULL,
                    PRIMARY KEY (site, collection)
                ) WITHOUT ROWID;
                CREATE TABLE sync_mirror (
                    site TEXT NOT NULL,
                    collection TEXT NOT NULL,
                    identifier TEXT NOT NULL,
                    date INTEGER,
                    srv_modified INTEGER,
                    is_valid INTEGER NOT NULL,
                    raw BLOB NOT NULL,
                    PRIMARY KEY (site, collection, identifier)
                ) WITHOUT ROWID;
                CREATE INDEX sync_mirror_date ON sync_mirror (site, collection, date, identifier);
                """)
        }),
    ]
}

/// The local mirror of `SyncManager` (`sync_cursor` and `sync_mirror` tables).
extension StateStore: SyncStore {
    /// The stored history cursor of a site and collection; `nil` before the first sync. Throws if the stored JSON is unreadable.
    public func cursor(site: String, collection: V3Collection) async throws -> HistoryCursor? {
        let text = try await access { db in
            try String.fetchOne(db, sql: "SELECT cursor FROM sync_cursor WHERE site = ? AND collection = ?",
                                arguments: [site, collection.rawValue])
        }
        return try SyncCursorText.decode(text, site: site, collection: collection, database: path ?? ":memory:")
    }

    /// Upserts `documents` into the mirror and, when `cursor` is non-`nil`, stores it, in one transaction.
    public func apply(site: String, collection: V3Collection, documents: [MirrorDocument], cursor: HistoryCursor?) async throws {
        let cursorText = try SyncCursorText.encode(cursor)
        try await write { db in
            if !documents.isEmpty {
                let statement = try db.cachedStatement(sql: """
                    INSERT INTO sync_mirror (site, collection, identifier, date, srv_modified, is_valid, raw)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (site, collection, identifier) DO UPDATE SET date = excluded.date,
                        srv_modified = excluded.srv_modified, is_valid = excluded.is_valid, raw = excluded.raw
                    """)
                for d in documents {
                    try statement.execute(arguments: [site, collection.rawValue, d.identifier, d.date, d.srvModified,
                                                      d.isValid, d.raw])
                }
            }
            if let cursorText {
                try db.execute(sql: """
                    INSERT INTO sync_cursor (site, collection, cursor, updated_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (site, collection) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at
                    """, arguments: [site, collection.rawValue, cursorText, Date().timeIntervalSince1970])
            }
        }
    }

    /// The mirrored `srvModified` and validity of each of `identifiers` that the mirror holds, by identifier.
    public func states(site: String, collection: V3Collection, identifiers: [String]) async throws -> [String: MirrorState] {
        guard !identifiers.isEmpty else { return [:] }
        return try await access { db in
            var out: [String: MirrorState] = [:]
            // SQLite limits bound parameters (32766 by default): ask in chunks.
            var start = identifiers.startIndex
            while start < identifiers.endIndex {
                let end = min(start + 500, identifiers.endIndex)
                let chunk = Array(identifiers[start..<end])
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                let rows = try Row.fetchAll(db, sql: """
                    SELECT identifier, srv_modified, is_valid FROM sync_mirror
                    WHERE site = ? AND collection = ? AND identifier IN (\(marks))
                    """, arguments: StatementArguments([site, collection.rawValue] + chunk))
                for row in rows {
                    out[row["identifier"]] = MirrorState(srvModified: row["srv_modified"], isValid: row["is_valid"])
                }
                start = end
            }
            return out
        }
    }

    /// The identifiers of valid (not deleted) mirrored documents dated within `from`...`through`
    /// (epoch ms; `nil` means unbounded).
    public func identifiers(site: String, collection: V3Collection, from: Int64?, through: Int64?) async throws -> Set<String> {
        try await access { db in
            let cursor = try String.fetchCursor(db, sql: """
                SELECT identifier FROM sync_mirror
                WHERE site = ? AND collection = ? AND date BETWEEN ? AND ? AND is_valid = 1
                """, arguments: [site, collection.rawValue, from ?? Int64.min, through ?? Int64.max])
            var ids = Set<String>()
            while let id = try cursor.next() { ids.insert(id) }
            return ids
        }
    }

    /// The raw JSON of mirrored documents dated within `from`...`through` (epoch ms; `nil` means
    /// unbounded), newest first, at most `limit` (`nil`: all); deleted ones only with `includeDeleted`.
    public func documents(site: String, collection: V3Collection, from: Int64?, through: Int64?, limit: Int?,
                          includeDeleted: Bool) async throws -> [Data] {
        try await access { db in
            var sql = """
                SELECT raw FROM sync_mirror
                WHERE site = ? AND collection = ? AND date BETWEEN ? AND ?
                """
            if !includeDeleted { sql += " AND is_valid = 1" }
            sql += " ORDER BY date DESC, identifier DESC LIMIT ?"
            return try Data.fetchAll(db, sql: sql, arguments: [site, collection.rawValue, from ?? Int64.min,
                                                               through ?? Int64.max, limit.map { max(0, $0) } ?? -1])
        }
    }
}

extension StateStore {
    /// How many documents the mirror holds for a site and collection (tombstones included).
    public func mirrorCount(site: String, collection: V3Collection) async throws -> Int {
        try await access { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sync_mirror WHERE site = ? AND collection = ?",
                             arguments: [site, collection.rawValue]) ?? 0
        }
    }
}
