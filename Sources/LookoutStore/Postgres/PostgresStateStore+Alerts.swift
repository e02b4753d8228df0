import Foundation
import PostgresNIO

/// Alert state and acknowledgements (`alert_state`, `alert_acks`) on PostgreSQL: the first
/// acknowledgement of an episode wins, whichever machine it comes from.
extension PostgresStateStore: AlertStateStore {
    /// The stored state of alert `id` and the acknowledgement of its current episode, if any.
    public func alertRecord(id: String) async throws(StateStoreError) -> (status: AlertStatus, data: String)? {
        let record = try await withConnection { [self] connection -> AlertRecord? in
            guard let row = try await self.rows("""
                SELECT s.*, a.acked_by AS ack_by, a.acked_at AS ack_at,
                    z.snoozed_by AS snooze_by, z.snoozed_at AS snooze_at, z.snoozed_until AS snooze_until FROM alert_state s
                LEFT JOIN alert_acks a ON a.id = s.id AND a.episode = s.episode
                LEFT JOIN alert_snoozes z ON z.id = s.id AND z.episode = s.episode WHERE s.id = \(id)
                """, on: connection).first else { return nil }
            return AlertRecord(status: try Self.alertStatus(row), data: try row["data"].decode(String.self))
        }
        return record.map { (status: $0.status, data: $0.data) }
    }

    private struct AlertRecord: Sendable { var status: AlertStatus; var data: String }

    /// Stores what the `alert` library knows of alert `id`.
    public func saveAlert(_ status: AlertStatus, data: String, now: Date) async throws(StateStoreError) {
        try await withConnection { [self] connection in
            try await self.execute("""
                INSERT INTO alert_state (id, script, title, severity, state, since, episode, data, updated_at)
                VALUES (\(status.id), \(status.script), \(status.title), \(status.severity), \(status.state),
                        \(status.since.timeIntervalSince1970), \(status.episode), \(data), \(now.timeIntervalSince1970))
                ON CONFLICT (id) DO UPDATE SET script = excluded.script, title = excluded.title,
                    severity = excluded.severity, state = excluded.state, since = excluded.since,
                    episode = excluded.episode, data = excluded.data, updated_at = excluded.updated_at
                """, on: connection)
        }
    }

    /// Acknowledges the current episode of alert `id` (the first acknowledgement wins). With
    /// `episode` (an ack link's), only that episode, and only once (as in SQLite).
    public func ackAlert(id: String, by: String, at: Date, episode expected: Int64? = nil) async throws -> AlertStatus {
        let outcome = try await transaction { [self] connection -> Result<AlertStatus, AlertAckError> in
            let episode: Int64
            switch try await self.alertingEpisode(id: id, on: connection) {
            case .success(let current): episode = current
            case .failure(let error): return .failure(error)
            }
            if let expected {
                guard expected == episode else { return .failure(.otherEpisode(id, link: expected, current: episode)) }
                if let earlier = try await self.rows("""
                    SELECT acked_by FROM alert_acks WHERE id = \(id) AND episode = \(episode)
                    """, on: connection).first.map({ try $0["acked_by"].decode(String.self) }) {
                    return .failure(.alreadyAcked(id, episode: episode, by: earlier))
                }
            }
            try await self.execute("""
                INSERT INTO alert_acks (id, episode, acked_by, acked_at) VALUES (\(id), \(episode), \(by), \(at.timeIntervalSince1970))
                ON CONFLICT (id, episode) DO NOTHING
                """, on: connection)
            guard let acked = try await self.rows("""
                SELECT s.*, a.acked_by AS ack_by, a.acked_at AS ack_at,
                    z.snoozed_by AS snooze_by, z.snoozed_at AS snooze_at, z.snoozed_until AS snooze_until FROM alert_state s
                JOIN alert_acks a ON a.id = s.id AND a.episode = s.episode
                LEFT JOIN alert_snoozes z ON z.id = s.id AND z.episode = s.episode WHERE s.id = \(id)
                """, on: connection).first else { return .failure(.unknown(id, known: [])) }
            return .success(try Self.alertStatus(acked))
        }
        return try outcome.get()
    }

    /// Snoozes the current episode of alert `id` until `until` (a later snooze replaces it), as in SQLite.
    public func snoozeAlert(id: String, by: String, at: Date, until: Date) async throws -> AlertStatus {
        let outcome = try await transaction { [self] connection -> Result<AlertStatus, AlertAckError> in
            let episode: Int64
            switch try await self.alertingEpisode(id: id, on: connection) {
            case .success(let current): episode = current
            case .failure(let error): return .failure(error)
            }
            try await self.execute("""
                INSERT INTO alert_snoozes (id, episode, snoozed_by, snoozed_at, snoozed_until)
                VALUES (\(id), \(episode), \(by), \(at.timeIntervalSince1970), \(until.timeIntervalSince1970))
                ON CONFLICT (id, episode) DO UPDATE SET snoozed_by = excluded.snoozed_by, snoozed_at = excluded.snoozed_at,
                    snoozed_until = excluded.snoozed_until
                """, on: connection)
            guard let snoozed = try await self.rows("""
                SELECT s.*, a.acked_by AS ack_by, a.acked_at AS ack_at,
                    z.snoozed_by AS snooze_by, z.snoozed_at AS snooze_at, z.snoozed_until AS snooze_until FROM alert_state s
                LEFT JOIN alert_acks a ON a.id = s.id AND a.episode = s.episode
                LEFT JOIN alert_snoozes z ON z.id = s.id AND z.episode = s.episode WHERE s.id = \(id)
                """, on: connection).first else { return .failure(.unknown(id, known: [])) }
            return .success(try Self.alertStatus(snoozed))
        }
        return try outcome.get()
    }

    /// The current episode of alert `id` (its row locked for share) when it is alerting;
    /// `unknown` or `notAlerting` otherwise.
    private func alertingEpisode(id: String, on connection: PostgresConnection) async throws -> Result<Int64, AlertAckError> {
        guard let row = try await rows("SELECT * FROM alert_state WHERE id = \(id) FOR SHARE", on: connection).first else {
            let known = try await rows("SELECT id FROM alert_state ORDER BY id", on: connection).map { try $0["id"].decode(String.self) }
            return .failure(.unknown(id, known: known))
        }
        let state = try row["state"].decode(String.self)
        guard AlertStatus.alertingStates.contains(state) else { return .failure(.notAlerting(id, state: state)) }
        return .success(try row["episode"].decode(Int64.self))
    }

    /// Every stored alert, by id, with the acknowledgement of its current episode.
    public func alertStatuses() async throws(StateStoreError) -> [AlertStatus] {
        try await withConnection { [self] connection in
            try await self.rows("""
                SELECT s.*, a.acked_by AS ack_by, a.acked_at AS ack_at,
                    z.snoozed_by AS snooze_by, z.snoozed_at AS snooze_at, z.snoozed_until AS snooze_until FROM alert_state s
                LEFT JOIN alert_acks a ON a.id = s.id AND a.episode = s.episode
                LEFT JOIN alert_snoozes z ON z.id = s.id AND z.episode = s.episode ORDER BY s.id
                """, on: connection).map(Self.alertStatus)
        }
    }

    private static func alertStatus(_ row: PostgresRandomAccessRow) throws -> AlertStatus {
        AlertStatus(id: try row["id"].decode(String.self), script: try row["script"].decode(String.self),
                    title: try row["title"].decode(String.self), severity: try row["severity"].decode(String.self),
                    state: try row["state"].decode(String.self),
                    since: Date(timeIntervalSince1970: try row["since"].decode(Double.self)),
                    episode: try row["episode"].decode(Int64.self),
                    ackedBy: try row["ack_by"].decode(String?.self),
                    ackedAt: try row["ack_at"].decode(Double?.self).map { Date(timeIntervalSince1970: $0) },
                    updatedAt: Date(timeIntervalSince1970: try row["updated_at"].decode(Double.self)),
                    why: StateStore.why(data: try row["data"].decode(String?.self)),
                    snoozedBy: try row["snooze_by"].decode(String?.self),
                    snoozedAt: try row["snooze_at"].decode(Double?.self).map { Date(timeIntervalSince1970: $0) },
                    snoozedUntil: try row["snooze_until"].decode(Double?.self).map { Date(timeIntervalSince1970: $0) })
    }
}
