import Foundation
import GRDB

/// Alert state and acknowledgements (`alert_state`, `alert_acks`) and the notification queue
/// (`notify_outbox`). The `alert` library writes `alert_state`; acknowledgements come from any
/// process (`lookout ack`, the status server, a script), so they live in their own table keyed
/// by alert and episode, and an acknowledgement never outlives the episode it was given for.
/// Snoozes from outside a script (`lookout ack --snooze`, the web view) likewise live in
/// `alert_snoozes`, keyed by alert and episode, with who gave them and when.
extension StateStore {
    /// The alert and notification tables.
    static let alertMigrations: [Migration] = [
        ("v5-alerts", { db in
            try db.execute(sql: """
                CREATE TABLE alert_state (
                    id TEXT PRIMARY KEY,
                    script TEXT NOT NULL,
                    title TEXT NOT NULL,
                    severity TEXT NOT NULL,
                    state TEXT NOT NULL,
                    since REAL NOT NULL,
                    episode INTEGER NOT NULL,
                    data TEXT NOT NULL,
                    updated_at REAL NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE alert_acks (
                    id TEXT NOT NULL,
                    episode INTEGER NOT NULL,
                    acked_by TEXT NOT NULL,
                    acked_at REAL NOT NULL,
                    PRIMARY KEY (id, episode)
                ) WITHOUT ROWID;
                CREATE TABLE notify_outbox (
                    id TEXT PRIMARY KEY,
                    channel TEXT NOT NULL,
                    message TEXT NOT NULL,
                    source TEXT,
                    created REAL NOT NULL,
                    state TEXT NOT NULL,
                    attempts INTEGER NOT NULL,
                    next_attempt REAL NOT NULL,
                    claimed_at REAL,
                    last_error TEXT,
                    last_status INTEGER,
                    sent_at REAL
                ) WITHOUT ROWID;
                CREATE INDEX notify_outbox_due ON notify_outbox (state, next_attempt);
                """)
        }),
    ]

    /// Snoozes given from outside a script (after the cluster tables).
    static let alertSnoozeMigrations: [Migration] = [
        ("v10-alert-snoozes", { db in
            try db.execute(sql: """
                CREATE TABLE alert_snoozes (
                    id TEXT NOT NULL,
                    episode INTEGER NOT NULL,
                    snoozed_by TEXT NOT NULL,
                    snoozed_at REAL NOT NULL,
                    snoozed_until REAL NOT NULL,
                    PRIMARY KEY (id, episode)
                ) WITHOUT ROWID;
                """)
        }),
    ]

    // MARK: Alert state

    /// The stored state of alert `id` and the acknowledgement of its current episode, if any.
    public func alertRecord(id: String) async throws(StateStoreError) -> (status: AlertStatus, data: String)? {
        try await access { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM alert_state WHERE id = ?", arguments: [id]) else { return nil }
            let ack = try Row.fetchOne(db, sql: "SELECT * FROM alert_acks WHERE id = ? AND episode = ?",
                                       arguments: [id, row["episode"] as Int64])
            var status = StateStore.alertStatus(row, ack: ack)
            try StateStore.addSnooze(&status, db)
            return (status, row["data"])
        }
    }

    /// Stores what the `alert` library knows of alert `id`.
    public func saveAlert(_ status: AlertStatus, data: String, now: Date) async throws(StateStoreError) {
        try await write { db in
            try db.execute(sql: """
                INSERT INTO alert_state (id, script, title, severity, state, since, episode, data, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET script = excluded.script, title = excluded.title,
                    severity = excluded.severity, state = excluded.state, since = excluded.since,
                    episode = excluded.episode, data = excluded.data, updated_at = excluded.updated_at
                """, arguments: [status.id, status.script, status.title, status.severity, status.state,
                                 status.since.timeIntervalSince1970, status.episode, data, now.timeIntervalSince1970])
        }
    }

    /// Acknowledges the current episode of alert `id`. The first acknowledgement of an episode
    /// wins (a second one returns the first). Throws when the alert is unknown or not alerting.
    /// With `episode` (an ack link's), only that episode is acknowledged, and only once: another
    /// current episode throws `otherEpisode`, an episode already acknowledged `alreadyAcked`.
    public func ackAlert(id: String, by: String, at: Date, episode expected: Int64? = nil) async throws -> AlertStatus {
        let outcome = try await write { db -> Result<AlertStatus, AlertAckError> in
            let row: Row
            switch try StateStore.alertingRow(id: id, db) {
            case .success(let found): row = found
            case .failure(let error): return .failure(error)
            }
            let episode: Int64 = row["episode"]
            if let expected {
                guard expected == episode else { return .failure(.otherEpisode(id, link: expected, current: episode)) }
                if let earlier = try String.fetchOne(db, sql: "SELECT acked_by FROM alert_acks WHERE id = ? AND episode = ?",
                                                     arguments: [id, episode]) {
                    return .failure(.alreadyAcked(id, episode: episode, by: earlier))
                }
            }
            try db.execute(sql: """
                INSERT INTO alert_acks (id, episode, acked_by, acked_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (id, episode) DO NOTHING
                """, arguments: [id, episode, by, at.timeIntervalSince1970])
            return .success(try StateStore.currentStatus(row, db))
        }
        return try outcome.get()
    }

    /// Snoozes the current episode of alert `id` until `until` (a later snooze of the same episode
    /// replaces it). Throws `AlertAckError` when the alert is unknown or not alerting.
    public func snoozeAlert(id: String, by: String, at: Date, until: Date) async throws -> AlertStatus {
        let outcome = try await write { db -> Result<AlertStatus, AlertAckError> in
            let row: Row
            switch try StateStore.alertingRow(id: id, db) {
            case .success(let found): row = found
            case .failure(let error): return .failure(error)
            }
            let episode: Int64 = row["episode"]
            try db.execute(sql: """
                INSERT INTO alert_snoozes (id, episode, snoozed_by, snoozed_at, snoozed_until) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (id, episode) DO UPDATE SET snoozed_by = excluded.snoozed_by, snoozed_at = excluded.snoozed_at,
                    snoozed_until = excluded.snoozed_until
                """, arguments: [id, episode, by, at.timeIntervalSince1970, until.timeIntervalSince1970])
            return .success(try StateStore.currentStatus(row, db))
        }
        return try outcome.get()
    }

    /// The state row of alert `id` when it is alerting; `unknown` or `notAlerting` otherwise.
    private static func alertingRow(id: String, _ db: Database) throws -> Result<Row, AlertAckError> {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM alert_state WHERE id = ?", arguments: [id]) else {
            return .failure(.unknown(id, known: try String.fetchAll(db, sql: "SELECT id FROM alert_state ORDER BY id")))
        }
        let state: String = row["state"]
        return AlertStatus.alertingStates.contains(state) ? .success(row) : .failure(.notAlerting(id, state: state))
    }

    /// The status of a state row with its episode's acknowledgement and snooze.
    private static func currentStatus(_ row: Row, _ db: Database) throws -> AlertStatus {
        let ack = try Row.fetchOne(db, sql: "SELECT * FROM alert_acks WHERE id = ? AND episode = ?",
                                   arguments: [row["id"] as String, row["episode"] as Int64])
        var status = alertStatus(row, ack: ack)
        try addSnooze(&status, db)
        return status
    }

    /// Adds the snooze of the status's episode, if any.
    private static func addSnooze(_ status: inout AlertStatus, _ db: Database) throws {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM alert_snoozes WHERE id = ? AND episode = ?",
                                         arguments: [status.id, status.episode]) else { return }
        status.snoozedBy = row["snoozed_by"]
        status.snoozedAt = Date(timeIntervalSince1970: row["snoozed_at"])
        status.snoozedUntil = Date(timeIntervalSince1970: row["snoozed_until"])
    }

    /// Every stored alert, by id.
    public func alertStatuses() async throws(StateStoreError) -> [AlertStatus] {
        try await access { db in
            try Row.fetchAll(db, sql: """
                SELECT s.*, a.acked_by AS ack_by, a.acked_at AS ack_at,
                    z.snoozed_by AS snooze_by, z.snoozed_at AS snooze_at, z.snoozed_until AS snooze_until FROM alert_state s
                LEFT JOIN alert_acks a ON a.id = s.id AND a.episode = s.episode
                LEFT JOIN alert_snoozes z ON z.id = s.id AND z.episode = s.episode ORDER BY s.id
                """).map { row in
                var status = StateStore.alertStatus(row, ack: nil)
                status.ackedBy = row["ack_by"]
                status.ackedAt = (row["ack_at"] as Double?).map { Date(timeIntervalSince1970: $0) }
                status.snoozedBy = row["snooze_by"]
                status.snoozedAt = (row["snooze_at"] as Double?).map { Date(timeIntervalSince1970: $0) }
                status.snoozedUntil = (row["snooze_until"] as Double?).map { Date(timeIntervalSince1970: $0) }
                return status
            }
        }
    }

    private static func alertStatus(_ row: Row, ack: Row?) -> AlertStatus {
        AlertStatus(id: row["id"], script: row["script"], title: row["title"], severity: row["severity"], state: row["state"],
                    since: Date(timeIntervalSince1970: row["since"]), episode: row["episode"],
                    ackedBy: ack.flatMap { $0["acked_by"] as String? },
                    ackedAt: ack.flatMap { $0["acked_at"] as Double? }.map { Date(timeIntervalSince1970: $0) },
                    updatedAt: Date(timeIntervalSince1970: row["updated_at"]), why: why(data: row["data"]))
    }

    /// The `why` the alert library keeps in its saved state (JSON), if any.
    static func why(data: String?) -> String? {
        guard let data, let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else { return nil }
        return object["why"] as? String
    }
}
