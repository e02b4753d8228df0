import Foundation
import GRDB

/// One notification in the durable queue (`notify_outbox`).
public struct NotifyItem: Sendable, Equatable {
    /// Where an item is.
    public enum State: String, Sendable, CaseIterable {
        /// Waiting for its first or next attempt.
        case pending
        /// Claimed by a process that is sending it now (back to `pending` if that process died).
        case sending
        /// Delivered (or handed to the Nightscout outbox).
        case sent
        /// Refused in a way retrying cannot fix (kept until retried or dropped).
        case failed
    }

    /// The id (unique; queuing the same id again changes nothing).
    public var id: String
    /// The channel.
    public var channel: String
    /// The message as JSON (no secrets).
    public var message: NotifyMessage
    /// When it was queued.
    public var created: Date
    /// Where it is.
    public var state: State
    /// Attempts so far.
    public var attempts: Int
    /// When the next attempt is due.
    public var nextAttempt: Date
    /// The last failure, redacted.
    public var lastError: String?
    /// The HTTP status of the last failure.
    public var lastStatus: Int?
    /// When it was delivered.
    public var sentAt: Date?

    /// The title, for listings.
    public var title: String { message.title }
    /// The script that queued it.
    public var source: String? { message.source }
}

extension StateStore {
    /// How long a claim holds before another process may take the item again (a sender that
    /// died mid-send). Longer than any send's timeout.
    static let notifyClaimLease: TimeInterval = 120

    /// Stores a new item, or returns the stored one with the same id (queued once, sent once).
    public func insertNotification(_ message: NotifyMessage, now: Date) async throws(StateStoreError) -> NotifyItem {
        let json = String(decoding: (try? JSONEncoder().encode(message)) ?? Data("{}".utf8), as: UTF8.self)
        return try await write { db in
            try db.execute(sql: """
                INSERT INTO notify_outbox (id, channel, message, source, created, state, attempts, next_attempt)
                VALUES (?, ?, ?, ?, ?, 'pending', 0, ?) ON CONFLICT (id) DO NOTHING
                """, arguments: [message.id, message.channel, json, message.source, now.timeIntervalSince1970,
                                 now.timeIntervalSince1970])
            return try StateStore.fetchNotification(db, id: message.id)!
        }
    }

    /// Claims a pending item (or one whose claim expired) for sending; nil when another process
    /// has it, it is not due (unless `force`), or it is no longer pending.
    public func claimNotification(id: String, now: Date, force: Bool) async throws(StateStoreError) -> NotifyItem? {
        try await write { db in
            let expired = now.timeIntervalSince1970 - StateStore.notifyClaimLease
            try db.execute(sql: """
                UPDATE notify_outbox SET state = 'sending', claimed_at = ?
                WHERE id = ? AND ((state = 'pending' AND (? OR next_attempt <= ?)) OR (state = 'sending' AND claimed_at < ?))
                """, arguments: [now.timeIntervalSince1970, id, force, now.timeIntervalSince1970, expired])
            guard db.changesCount == 1 else { return nil }
            return try StateStore.fetchNotification(db, id: id)
        }
    }

    /// Stores the outcome of an attempt.
    public func finishNotification(_ item: NotifyItem) async throws(StateStoreError) {
        try await write { db in
            try db.execute(sql: """
                UPDATE notify_outbox SET state = ?, attempts = ?, next_attempt = ?, last_error = ?, last_status = ?,
                    sent_at = ?, claimed_at = NULL WHERE id = ?
                """, arguments: [item.state.rawValue, item.attempts, item.nextAttempt.timeIntervalSince1970, item.lastError,
                                 item.lastStatus, item.sentAt?.timeIntervalSince1970, item.id])
        }
    }

    /// Ids of items due at `now` (pending and due, or claimed by a sender that died), oldest first.
    public func dueNotifications(now: Date, limit: Int) async throws(StateStoreError) -> [String] {
        try await access { db in
            try String.fetchAll(db, sql: """
                SELECT id FROM notify_outbox WHERE (state = 'pending' AND next_attempt <= ?)
                    OR (state = 'sending' AND claimed_at < ?) ORDER BY created, id LIMIT ?
                """, arguments: [now.timeIntervalSince1970, now.timeIntervalSince1970 - StateStore.notifyClaimLease, limit])
        }
    }

    /// The earliest time an item may need an attempt, if any is unsent.
    public func nextNotificationDue() async throws(StateStoreError) -> Date? {
        try await access { db in
            try Double.fetchOne(db, sql: """
                SELECT MIN(CASE WHEN state = 'pending' THEN next_attempt ELSE claimed_at + ? END)
                FROM notify_outbox WHERE state IN ('pending', 'sending')
                """, arguments: [StateStore.notifyClaimLease]).map { Date(timeIntervalSince1970: $0) }
        }
    }

    /// Items in the given states, oldest first.
    public func notifications(states: Set<NotifyItem.State>, limit: Int) async throws(StateStoreError) -> [NotifyItem] {
        let list = states.map(\.rawValue).sorted()
        return try await access { db in
            let marks = Array(repeating: "?", count: list.count).joined(separator: ",")
            var arguments: [any DatabaseValueConvertible] = list
            arguments.append(limit)
            return try Row.fetchAll(db, sql: "SELECT * FROM notify_outbox WHERE state IN (\(marks)) ORDER BY created, id LIMIT ?",
                                    arguments: StatementArguments(arguments)).compactMap(StateStore.notifyItem)
        }
    }

    /// One item.
    public func notification(id: String) async throws(StateStoreError) -> NotifyItem? {
        try await access { db in try StateStore.fetchNotification(db, id: id) }
    }

    /// Makes an item pending and due now (not a sent one). Returns whether it exists.
    public func retryNotification(id: String, now: Date) async throws(StateStoreError) -> Bool {
        try await write { db in
            try db.execute(sql: "UPDATE notify_outbox SET state = 'pending', next_attempt = ?, claimed_at = NULL WHERE id = ? AND state != 'sent'",
                           arguments: [now.timeIntervalSince1970, id])
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notify_outbox WHERE id = ?", arguments: [id]) == 1
        }
    }

    /// Removes an item; `false` when there was none.
    public func dropNotification(id: String) async throws(StateStoreError) -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM notify_outbox WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    static func fetchNotification(_ db: Database, id: String) throws -> NotifyItem? {
        try Row.fetchOne(db, sql: "SELECT * FROM notify_outbox WHERE id = ?", arguments: [id]).flatMap(notifyItem)
    }

    static func notifyItem(_ row: Row) -> NotifyItem? {
        guard let state = NotifyItem.State(rawValue: row["state"]),
              let message = try? JSONDecoder().decode(NotifyMessage.self, from: Data((row["message"] as String).utf8)) else { return nil }
        return NotifyItem(id: row["id"], channel: row["channel"], message: message, created: Date(timeIntervalSince1970: row["created"]),
                          state: state, attempts: row["attempts"], nextAttempt: Date(timeIntervalSince1970: row["next_attempt"]),
                          lastError: row["last_error"], lastStatus: row["last_status"],
                          sentAt: (row["sent_at"] as Double?).map { Date(timeIntervalSince1970: $0) })
    }
}
