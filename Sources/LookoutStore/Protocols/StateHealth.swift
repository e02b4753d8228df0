import Foundation
import GRDB
import PostgresNIO

/// What `lookout doctor` reads about the state database itself.
public struct StateHealth: Sendable, Equatable {
    /// The database's clock when read (this machine's for SQLite).
    public var now: Date
    /// The audit protections the schema should have (trigger names) that are missing: empty when
    /// the audit log is append-only in the database.
    public var missingAuditProtections: [String]
    /// The clusters that ever ran on this database, by name.
    public var clusters: [String]

    /// A reading.
    public init(now: Date, missingAuditProtections: [String], clusters: [String]) {
        self.now = now
        self.missingAuditProtections = missingAuditProtections
        self.clusters = clusters
    }
}

extension StateStore {
    /// The triggers that keep the audit log append-only in the SQLite file.
    static let auditTriggers = ["audit_no_update", "audit_no_delete", "audit_repeats_no_delete", "audit_repeats_only_grow"]

    /// The database's health for doctor.
    public func health() async throws(StateStoreError) -> StateHealth {
        try await access { db in
            let triggers = Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger'"))
            let clusters = try String.fetchAll(db, sql: "SELECT DISTINCT cluster FROM cluster_instances ORDER BY cluster")
            return StateHealth(now: Date(), missingAuditProtections: StateStore.auditTriggers.filter { !triggers.contains($0) },
                               clusters: clusters)
        }
    }
}

extension PostgresStateStore {
    /// The triggers that keep the audit log append-only on PostgreSQL.
    static let auditTriggers = ["audit_no_update_delete", "audit_no_truncate", "audit_repeats_only_grow", "audit_repeats_no_truncate"]

    /// The database's health for doctor.
    public func health() async throws(StateStoreError) -> StateHealth {
        try await withConnection { [self] connection in
            let now = try await self.databaseTime(on: connection)
            let triggers = Set(try await self.rows("""
                SELECT tgname::text AS name FROM pg_trigger
                WHERE tgrelid IN ('audit'::regclass, 'audit_repeats'::regclass) AND tgenabled <> 'D' AND NOT tgisinternal
                """, on: connection).map { try $0["name"].decode(String.self) })
            let clusters = try await self.rows("SELECT DISTINCT cluster FROM cluster_instances ORDER BY cluster", on: connection)
                .map { try $0["cluster"].decode(String.self) }
            return StateHealth(now: Date(timeIntervalSince1970: now),
                               missingAuditProtections: Self.auditTriggers.filter { !triggers.contains($0) }, clusters: clusters)
        }
    }
}
