import Foundation
import GRDB
import NightscoutKit

/// The append-only audit log of Loop remote commands (`audit` table): every attempt, refusal,
/// send, failure and confirmation, as NightscoutKit's `RemoteCommandGuard` writes them. Triggers
/// refuse any UPDATE or DELETE, so not even Lookout can rewrite history.
extension StateStore: AuditLog, RemoteCommandHistory {
    /// The audit log's table.
    static let auditMigrations: [Migration] = [
        ("v4-audit", { db in
            try db.execute(sql: """
                CREATE TABLE audit (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL UNIQUE,
                    ticket TEXT,
                    time REAL NOT NULL,
                    site TEXT NOT NULL,
                    source TEXT NOT NULL,
                    verdict TEXT NOT NULL,
                    reason_code TEXT,
                    reason TEXT,
                    phase TEXT NOT NULL,
                    detail TEXT NOT NULL,
                    command TEXT NOT NULL
                );
                CREATE INDEX audit_site_time ON audit (site, time);
                CREATE INDEX audit_ticket ON audit (ticket);
                CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
                    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
                CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
                    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
                """)
        }),
    ]

    public func append(_ entry: AuditEntry) async throws {
        let command = String(decoding: try JSONEncoder().encode(entry.command), as: UTF8.self)
        try await write { db in
            try db.execute(sql: """
                INSERT INTO audit (id, ticket, time, site, source, verdict, reason_code, reason, phase, detail, command)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [entry.id.uuidString, entry.ticketID?.uuidString, entry.time.timeIntervalSince1970, entry.site,
                                 entry.source, entry.verdict.rawValue, entry.reasonCode, entry.reason, entry.phase.rawValue,
                                 entry.detail, command])
        }
    }

    public func recentCommands(site: String, since: Date) async throws -> [RemoteCommandRecord] {
        let entries = try await access { db in
            try Row.fetchAll(db, sql: """
                SELECT * FROM audit WHERE ticket IN (
                    SELECT DISTINCT ticket FROM audit WHERE site = ? AND time >= ? AND ticket IS NOT NULL)
                ORDER BY seq
                """, arguments: [site, since.timeIntervalSince1970]).compactMap(StateStore.auditEntry)
        }
        return RemoteCommandRecord.records(from: entries).filter { $0.time >= since }
    }

    /// The newest `limit` entries (of one site, or all), oldest first.
    public func auditEntries(site: String? = nil, limit: Int = 100) async throws -> [AuditEntry] {
        try await access { db in
            let rows = site == nil
                ? try Row.fetchAll(db, sql: "SELECT * FROM audit ORDER BY seq DESC LIMIT ?", arguments: [limit])
                : try Row.fetchAll(db, sql: "SELECT * FROM audit WHERE site = ? ORDER BY seq DESC LIMIT ?", arguments: [site, limit])
            return rows.reversed().compactMap(StateStore.auditEntry)
        }
    }

    /// A row as an entry (`nil` for a row a newer Lookout wrote in a form this one cannot read).
    static func auditEntry(_ row: Row) -> AuditEntry? {
        guard let id = UUID(uuidString: row["id"]),
              let verdict = AuditVerdict(rawValue: row["verdict"]), let phase = AuditPhase(rawValue: row["phase"]),
              let commandText: String = row["command"],
              let command = try? JSONDecoder().decode(AuditCommand.self, from: Data(commandText.utf8)) else { return nil }
        return AuditEntry(id: id, ticketID: (row["ticket"] as String?).flatMap(UUID.init(uuidString:)),
                          time: Date(timeIntervalSince1970: row["time"]), site: row["site"], command: command,
                          source: row["source"], verdict: verdict, reasonCode: row["reason_code"], reason: row["reason"],
                          phase: phase, detail: row["detail"])
    }
}
