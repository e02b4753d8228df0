import Foundation
import NightscoutKit
import PostgresNIO

/// The Nightscout sync mirror (`sync_cursor`, `sync_mirror`) on PostgreSQL, as `SyncStore`.
extension PostgresStateStore: MirrorStore {
    /// The stored history cursor of a site and collection; nil before the first sync.
    public func cursor(site: String, collection: V3Collection) async throws -> HistoryCursor? {
        let text = try await withConnection { [self] connection in
            try await self.rows("SELECT cursor FROM sync_cursor WHERE site = \(site) AND collection = \(collection.rawValue)",
                                on: connection).first.map { try $0["cursor"].decode(String.self) }
        }
        return try SyncCursorText.decode(text, site: site, collection: collection, database: location)
    }

    /// Upserts `documents` and, when `cursor` is non-nil, stores it, in one transaction.
    public func apply(site: String, collection: V3Collection, documents: [MirrorDocument], cursor: HistoryCursor?) async throws {
        let cursorText = try SyncCursorText.encode(cursor)
        try await transaction { [self] connection in
            for d in documents {
                try await self.execute("""
                    INSERT INTO sync_mirror (site, collection, identifier, date, srv_modified, is_valid, raw)
                    VALUES (\(site), \(collection.rawValue), \(d.identifier), \(d.date), \(d.srvModified), \(d.isValid), \(d.raw))
                    ON CONFLICT (site, collection, identifier) DO UPDATE SET date = excluded.date,
                        srv_modified = excluded.srv_modified, is_valid = excluded.is_valid, raw = excluded.raw
                    """, on: connection)
            }
            if let cursorText {
                try await self.execute("""
                    INSERT INTO sync_cursor (site, collection, cursor, updated_at)
                    VALUES (\(site), \(collection.rawValue), \(cursorText), \(Date().timeIntervalSince1970))
                    ON CONFLICT (site, collection) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at
                    """, on: connection)
            }
        }
    }

    /// The mirrored `srvModified` and validity of each of `identifiers` the mirror holds.
    public func states(site: String, collection: V3Collection, identifiers: [String]) async throws -> [String: MirrorState] {
        guard !identifiers.isEmpty else { return [:] }
        let found = try await withConnection { [self] connection in
            try await self.rows("""
                SELECT identifier, srv_modified, is_valid FROM sync_mirror
                WHERE site = \(site) AND collection = \(collection.rawValue) AND identifier = ANY(\(identifiers))
                """, on: connection).map { row in
                (try row["identifier"].decode(String.self),
                 MirrorState(srvModified: try row["srv_modified"].decode(Int64?.self), isValid: try row["is_valid"].decode(Bool.self)))
            }
        }
        return Dictionary(found, uniquingKeysWith: { _, last in last })
    }

    /// The identifiers of valid mirrored documents dated within `from`...`through` (epoch ms).
    public func identifiers(site: String, collection: V3Collection, from: Int64?, through: Int64?) async throws -> Set<String> {
        try await withConnection { [self] connection in
            Set(try await self.rows("""
                SELECT identifier FROM sync_mirror
                WHERE site = \(site) AND collection = \(collection.rawValue)
                    AND date BETWEEN \(from ?? Int64.min) AND \(through ?? Int64.max) AND is_valid
                """, on: connection).map { try $0["identifier"].decode(String.self) })
        }
    }

    /// The raw JSON of mirrored documents dated within `from`...`through`, newest first.
    public func documents(site: String, collection: V3Collection, from: Int64?, through: Int64?, limit: Int?,
                          includeDeleted: Bool) async throws -> [Data] {
        try await withConnection { [self] connection in
            try await self.rows("""
                SELECT raw FROM sync_mirror
                WHERE site = \(site) AND collection = \(collection.rawValue)
                    AND date BETWEEN \(from ?? Int64.min) AND \(through ?? Int64.max) AND (is_valid OR \(includeDeleted))
                ORDER BY date DESC, identifier DESC LIMIT \(limit.map { max(0, $0) })
                """, on: connection).map { try $0["raw"].decode(Data.self) }
        }
    }

    /// How many documents the mirror holds for a site and collection (tombstones included).
    public func mirrorCount(site: String, collection: V3Collection) async throws -> Int {
        try await withConnection { [self] connection in
            Int(try await self.rows("""
                SELECT COUNT(*) AS n FROM sync_mirror WHERE site = \(site) AND collection = \(collection.rawValue)
                """, on: connection).first?["n"].decode(Int64.self) ?? 0)
        }
    }
}
