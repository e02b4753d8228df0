import Foundation
import PostgresNIO

/// The notification queue (`notify_outbox`) on PostgreSQL. A claim is one conditional UPDATE
/// (the row lock makes a second claimer re-check the condition and find the item taken); a
/// batch claim picks due rows `FOR UPDATE SKIP LOCKED`, so concurrent senders on several
/// machines split the queue without waiting for each other and never get the same item.
extension PostgresStateStore: NotifyQueueStore {
    /// Stores a new item, or returns the stored one with the same id (queued once, sent once).
    public func insertNotification(_ message: NotifyMessage, now: Date) async throws(StateStoreError) -> NotifyItem {
        let json = String(decoding: (try? JSONEncoder().encode(message)) ?? Data("{}".utf8), as: UTF8.self)
        let time = now.timeIntervalSince1970
        let item = try await withConnection { [self] connection in
            try await self.execute("""
                INSERT INTO notify_outbox (id, channel, message, source, created, state, attempts, next_attempt)
                VALUES (\(message.id), \(message.channel), \(json), \(message.source), \(time), 'pending', 0, \(time))
                ON CONFLICT (id) DO NOTHING
                """, on: connection)
            return try await self.fetchNotification(id: message.id, on: connection)
        }
        guard let item else { throw StateStoreError(file: location, message: "notification \(message.id) vanished after insert") }
        return item
    }

    /// Claims a pending item (or one whose claim expired); nil when it is taken, not due or done.
    public func claimNotification(id: String, now: Date, force: Bool) async throws(StateStoreError) -> NotifyItem? {
        let time = now.timeIntervalSince1970
        let expired = time - StateStore.notifyClaimLease
        return try await withConnection { [self] connection in
            try await self.rows("""
                UPDATE notify_outbox SET state = 'sending', claimed_at = \(time)
                WHERE id = \(id) AND ((state = 'pending' AND (\(force) OR next_attempt <= \(time)))
                    OR (state = 'sending' AND claimed_at < \(expired)))
                RETURNING *
                """, on: connection).first.flatMap(Self.notifyItem)
        }
    }

    /// Claims up to `limit` due items, oldest first, skipping rows another claimer holds.
    public func claimDueNotifications(now: Date, limit: Int) async throws(StateStoreError) -> [NotifyItem] {
        let time = now.timeIntervalSince1970
        let expired = time - StateStore.notifyClaimLease
        return try await withConnection { [self] connection in
            try await self.rows("""
                UPDATE notify_outbox SET state = 'sending', claimed_at = \(time)
                WHERE id IN (
                    SELECT id FROM notify_outbox
                    WHERE (state = 'pending' AND next_attempt <= \(time)) OR (state = 'sending' AND claimed_at < \(expired))
                    ORDER BY created, id LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                RETURNING *
                """, on: connection).compactMap(Self.notifyItem).sorted { ($0.created, $0.id) < ($1.created, $1.id) }
        }
    }

    /// Stores the outcome of an attempt.
    public func finishNotification(_ item: NotifyItem) async throws(StateStoreError) {
        try await withConnection { [self] connection in
            try await self.execute("""
                UPDATE notify_outbox SET state = \(item.state.rawValue), attempts = \(item.attempts),
                    next_attempt = \(item.nextAttempt.timeIntervalSince1970), last_error = \(item.lastError),
                    last_status = \(item.lastStatus), sent_at = \(item.sentAt?.timeIntervalSince1970), claimed_at = NULL
                WHERE id = \(item.id)
                """, on: connection)
        }
    }

    /// Ids of items due at `now`, oldest first.
    public func dueNotifications(now: Date, limit: Int) async throws(StateStoreError) -> [String] {
        let time = now.timeIntervalSince1970
        let expired = time - StateStore.notifyClaimLease
        return try await withConnection { [self] connection in
            try await self.rows("""
                SELECT id FROM notify_outbox WHERE (state = 'pending' AND next_attempt <= \(time))
                    OR (state = 'sending' AND claimed_at < \(expired)) ORDER BY created, id LIMIT \(limit)
                """, on: connection).map { try $0["id"].decode(String.self) }
        }
    }

    /// The earliest time an item may need an attempt, if any is unsent.
    public func nextNotificationDue() async throws(StateStoreError) -> Date? {
        try await withConnection { [self] connection in
            try await self.rows("""
                SELECT MIN(CASE WHEN state = 'pending' THEN next_attempt ELSE claimed_at + \(StateStore.notifyClaimLease) END) AS due
                FROM notify_outbox WHERE state IN ('pending', 'sending')
                """, on: connection).first.flatMap { try $0["due"].decode(Double?.self) }.map { Date(timeIntervalSince1970: $0) }
        }
    }

    /// Items in the given states, oldest first.
    public func notifications(states: Set<NotifyItem.State>, limit: Int) async throws(StateStoreError) -> [NotifyItem] {
        let list = states.map(\.rawValue).sorted()
        return try await withConnection { [self] connection in
            try await self.rows("""
                SELECT * FROM notify_outbox WHERE state = ANY(\(list)) ORDER BY created, id LIMIT \(limit)
                """, on: connection).compactMap(Self.notifyItem)
        }
    }

    /// One item.
    public func notification(id: String) async throws(StateStoreError) -> NotifyItem? {
        try await withConnection { [self] connection in try await self.fetchNotification(id: id, on: connection) }
    }

    /// Makes an item pending and due now (not a sent one). Returns whether it exists.
    public func retryNotification(id: String, now: Date) async throws(StateStoreError) -> Bool {
        try await withConnection { [self] connection in
            try await self.execute("""
                UPDATE notify_outbox SET state = 'pending', next_attempt = \(now.timeIntervalSince1970), claimed_at = NULL
                WHERE id = \(id) AND state <> 'sent'
                """, on: connection)
            return try await !self.rows("SELECT 1 FROM notify_outbox WHERE id = \(id)", on: connection).isEmpty
        }
    }

    /// Removes an item; `false` when there was none.
    public func dropNotification(id: String) async throws(StateStoreError) -> Bool {
        try await withConnection { [self] connection in
            try await self.execute("DELETE FROM notify_outbox WHERE id = \(id) RETURNING 1", on: connection) > 0
        }
    }

    private func fetchNotification(id: String, on connection: PostgresConnection) async throws -> NotifyItem? {
        try await rows("SELECT * FROM notify_outbox WHERE id = \(id)", on: connection).first.flatMap(Self.notifyItem)
    }

    static func notifyItem(_ row: PostgresRandomAccessRow) -> NotifyItem? {
        guard let stateText = try? row["state"].decode(String.self), let state = NotifyItem.State(rawValue: stateText),
              let text = try? row["message"].decode(String.self),
              let message = try? JSONDecoder().decode(NotifyMessage.self, from: Data(text.utf8)),
              let id = try? row["id"].decode(String.self), let channel = try? row["channel"].decode(String.self),
              let created = try? row["created"].decode(Double.self), let attempts = try? row["attempts"].decode(Int32.self),
              let next = try? row["next_attempt"].decode(Double.self) else { return nil }
        return NotifyItem(id: id, channel: channel, message: message, created: Date(timeIntervalSince1970: created),
                          state: state, attempts: Int(attempts), nextAttempt: Date(timeIntervalSince1970: next),
                          lastError: (try? row["last_error"].decode(String?.self)) ?? nil,
                          lastStatus: ((try? row["last_status"].decode(Int32?.self)) ?? nil).map(Int.init),
                          sentAt: ((try? row["sent_at"].decode(Double?.self)) ?? nil).map { Date(timeIntervalSince1970: $0) })
    }
}
