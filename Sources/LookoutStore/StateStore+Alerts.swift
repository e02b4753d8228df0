import Foundation
import GRDB

/// Alert state and acknowledgements (`alert_state`, `alert_acks`) and the notification queue
/// (`notify_outbox`). The `alert` library writes `alert_state`; acknowledgements come from any
/// process (`lookout ack`, the status server, a script), so they live in their own table keyed
/// by alert and episode, and an acknowledgement never outlives the episode it was given for.
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

    // MARK: Alert state

    /// The stored state of alert `id` and the acknowledgement of its current episode, if any.
    public func alertRecord(id: String) async throws(StateStoreError) -> (status: AlertStatus, data: String)? {
        try await access { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM alert_state WHERE id = ?", arguments: [id]) else { return nil }
            let ack = try Row.fetchOne(db, sql: "SELECT * FROM alert_acks WHERE id = ? AND episode = ?",
                                       arguments: [id, row["episode"] as Int64])
            return (StateStore.alertStatus(row, ack: ack), row["data"])
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
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM alert_state WHERE id = ?", arguments: [id]) else {
                let known = try String.fetchAll(db, sql: "SELECT id FROM alert_state ORDER BY id")
                return .failure(.unknown(id, known: known))
            }
            let state: String = row["state"]
            guard AlertStatus.alertingStates.contains(state) else { return .failure(.notAlerting(id, state: state)) }
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
            let ack = try Row.fetchOne(db, sql: "SELECT * FROM alert_acks WHERE id = ? AND episode = ?", arguments: [id, episode])
            return .success(StateStore.alertStatus(row, ack: ack))
        }
        return try outcome.get()
    }

    /// Every stored alert, by id.
    public func alertStatuses() async throws(StateStoreError) -> [AlertStatus] {
        try await access { db in
            try Row.fetchAll(db, sql: """
                SELECT s.*, a.acked_by AS ack_by, a.acked_at AS ack_at FROM alert_state s
                LEFT JOIN alert_acks a ON a.id = s.id AND a.episode = s.episode ORDER BY s.id
                """).map { row in
                var status = StateStore.alertStatus(row, ack: nil)
                status.ackedBy = row["ack_by"]
                status.ackedAt = (row["ack_at"] as Double?).map { Date(timeIntervalSince1970: $0) }
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
