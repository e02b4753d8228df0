import Foundation
import GRDB
import NightscoutKit

/// The append-only audit log of Loop remote commands (`audit` table): every attempt, refusal,
/// send, failure and confirmation, as NightscoutKit's `RemoteCommandGuard` writes them. Triggers
/// refuse any UPDATE or DELETE, so not even Lookout can rewrite history.
///
/// It is also the guard's `RemoteCommandLedger`: a reservation is an `attempted` row written in
/// the same `BEGIN IMMEDIATE` transaction that read the site's recent rows, so every process
/// using this database (two `lookout run`s, profiles naming one site, `serve --isolate`
/// workers) shares one budget per site.
extension StateStore: RemoteCommandLedger {
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

    /// The counters of refusals folded onto earlier rows (`AuditRepeats`).
    static let auditRepeatMigrations: [Migration] = [
        ("v6-audit-repeats", { db in
            // Refusals counted on an earlier row instead of written again (`AuditRepeats`): a
            // counter beside the log, which only grows; the rows themselves never change.
            try db.execute(sql: """
                CREATE TABLE audit_repeats (
                    seq INTEGER PRIMARY KEY REFERENCES audit (seq),
                    count INTEGER NOT NULL,
                    last_time REAL NOT NULL
                );
                CREATE TRIGGER audit_repeats_no_delete BEFORE DELETE ON audit_repeats
                    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
                CREATE TRIGGER audit_repeats_only_grow BEFORE UPDATE ON audit_repeats
                    WHEN NEW.seq IS NOT OLD.seq OR NEW.count < OLD.count OR NEW.last_time < OLD.last_time
                    BEGIN SELECT RAISE(ABORT, 'audit repeat counts only grow'); END;
                """)
        }),
    ]

    /// Appends one entry (its own transaction); a refusal that repeats an earlier one is counted
    /// on it (`AuditRepeats`). When the database cannot take it (locked by another process for
    /// longer than `busyTimeout`, disk full) the entry goes to the audit journal beside the
    /// database, folded into the log by the next write that succeeds, and the error is thrown.
    public func append(_ entry: AuditEntry) async throws {
        let command = try Self.commandText(entry)
        await foldAuditJournal()
        do {
            try await write { db in try StateStore.insert(entry, command: command, in: db) }
        } catch {
            journal(entry)
            throw error
        }
    }

    /// Reads the recent records of the commands sharing a budget with this one (under `site` or
    /// any of `keys`, or a key linked to them through a command, see `remote_budget_keys`), decides and appends, in one `BEGIN IMMEDIATE`
    /// transaction (other processes wait up to `busyTimeout` for it).
    public func reserve<T: Sendable>(
        site: String, keys: [String], window: TimeInterval, now given: Date?,
        _ decide: @escaping @Sendable ([RemoteCommandRecord], Date) -> (entry: AuditEntry, result: T)
    ) async throws -> T {
        try await reserve(site: site, keys: keys, window: window, now: given, fence: nil, decide)
    }

    /// ``reserve(site:keys:window:now:_:)`` under a cluster lease: the transaction first checks
    /// that `fence` is still the live holding, and throws ``LeaseLost`` (nothing appended) when
    /// it is not.
    public func reserve<T: Sendable>(
        site: String, keys: [String], window: TimeInterval, now given: Date?, fence: LeaseFence?,
        _ decide: @escaping @Sendable ([RemoteCommandRecord], Date) -> (entry: AuditEntry, result: T)
    ) async throws -> T {
        await foldAuditJournal()
        do {
            return try await database.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    if let fence, try !StateStore.leaseIsHeld(fence, in: db) { throw LeaseLost(fence: fence) }
                    let now = given ?? Date()
                    let records = try StateStore.records(site: site, keys: keys, since: now - window, in: db)
                    let decided = decide(records, now)
                    try StateStore.insert(decided.entry, command: try StateStore.commandText(decided.entry), in: db)
                    if let ticket = decided.entry.ticketID {
                        try StateStore.recordBudgetKeys(ticket: ticket, keys: keys + [site], time: decided.entry.time, in: db)
                    }
                    result = decided.result
                    return .commit
                }
                guard let result else { throw StateStoreError(file: "", message: "the reservation was not committed") }
                return result
            }
        } catch {
            throw StateStoreError(file: path ?? ":memory:", underlying: error)
        }
    }

    /// The site's in-flight, sent, failed and released commands whose time is at or after
    /// `since` (every entry of each ticket with any entry since then, through
    /// `RemoteCommandRecord.records(from:)`).
    public func recentCommands(site: String, since: Date) async throws -> [RemoteCommandRecord] {
        try await access { db in try StateStore.records(site: site, since: since, in: db) }
    }

    static func records(site: String, keys: [String] = [], since: Date, in db: Database) throws -> [RemoteCommandRecord] {
        // Every key linked to these through a recent ticket (closed transitively), and the
        // tickets under any of them; rows written before budget keys were recorded carry one of
        // the keys as their site.
        let start = [site] + keys
        let values = Array(repeating: "(?)", count: start.count).joined(separator: ", ")
        let from = since.timeIntervalSince1970 - budgetKeySlack
        let entries = try Row.fetchAll(db, sql: """
            WITH RECURSIVE linked(key) AS (
                VALUES \(values)
                UNION
                SELECT other.key FROM remote_budget_keys AS one
                    JOIN remote_budget_keys AS other ON other.ticket = one.ticket
                    JOIN linked ON one.key = linked.key
                WHERE one.time >= ?)
            SELECT * FROM audit WHERE ticket IN (
                SELECT DISTINCT ticket FROM audit WHERE site IN (SELECT key FROM linked) AND time >= ? AND ticket IS NOT NULL
                UNION SELECT ticket FROM remote_budget_keys WHERE time >= ? AND key IN (SELECT key FROM linked))
            ORDER BY seq
            """, arguments: StatementArguments(start) + StatementArguments([from, since.timeIntervalSince1970, from]))
            .compactMap(StateStore.auditEntry)
        return RemoteCommandRecord.records(from: entries).filter { $0.time >= since }
    }

    static func commandText(_ entry: AuditEntry) throws -> String {
        String(decoding: try JSONEncoder().encode(entry.command), as: UTF8.self)
    }

    /// Writes `entry` as a row, or counts it on an earlier row (`AuditRepeats.target`).
    static func insert(_ entry: AuditEntry, command: String, in db: Database) throws {
        if AuditRepeats.mayFold(entry) {
            let recent = try Row.fetchAll(db, sql: """
                SELECT * FROM audit WHERE site = ? AND time >= ? AND verdict = 'refused' AND ticket IS NULL
                ORDER BY seq DESC LIMIT ?
                """, arguments: [entry.site, (entry.time - AuditRepeats.window).timeIntervalSince1970, AuditRepeats.candidates])
                .compactMap { row in StateStore.auditEntry(row).map { (key: row["seq"] as Int64, entry: $0) } }
            if let seq = AuditRepeats.target(for: entry, among: recent) {
                try db.execute(sql: """
                    INSERT INTO audit_repeats (seq, count, last_time) VALUES (?, 1, ?)
                    ON CONFLICT (seq) DO UPDATE SET count = count + 1, last_time = max(last_time, excluded.last_time)
                    """, arguments: [seq, entry.time.timeIntervalSince1970])
                return
            }
        }
        try db.execute(sql: """
            INSERT INTO audit (id, ticket, time, site, source, verdict, reason_code, reason, phase, detail, command)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [entry.id.uuidString, entry.ticketID?.uuidString, entry.time.timeIntervalSince1970, entry.site,
                             entry.source, entry.verdict.rawValue, entry.reasonCode, entry.reason, entry.phase.rawValue,
                             entry.detail, command])
    }

    /// The newest `limit` entries (of one site, or all), oldest first, each with how often it
    /// was repeated (refusals counted on it instead of written again).
    public func auditLog(site: String? = nil, limit: Int = 100) async throws -> [AuditRecordRow] {
        await foldAuditJournal()
        return try await access { db in
            let select = "SELECT audit.*, audit_repeats.count AS repeats, audit_repeats.last_time AS last_repeat "
                + "FROM audit LEFT JOIN audit_repeats USING (seq)"
            let rows = site == nil
                ? try Row.fetchAll(db, sql: select + " ORDER BY seq DESC LIMIT ?", arguments: [limit])
                : try Row.fetchAll(db, sql: select + " WHERE site = ? ORDER BY seq DESC LIMIT ?", arguments: [site, limit])
            return rows.reversed().compactMap { row in
                StateStore.auditEntry(row).map { entry in
                    AuditRecordRow(entry: entry, repeats: row["repeats"] ?? 0,
                                   lastRepeat: (row["last_repeat"] as Double?).map { Date(timeIntervalSince1970: $0) })
                }
            }
        }
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

/// One audit entry as stored, with the refusals counted on it.
public struct AuditRecordRow: Sendable, Equatable {
    /// The entry.
    public var entry: AuditEntry
    /// How many identical (or, past `AuditRepeats.rowsPerWindow`, alike) refusals were counted
    /// on it instead of written.
    public var repeats: Int
    /// When the last of them happened.
    public var lastRepeat: Date?
}
