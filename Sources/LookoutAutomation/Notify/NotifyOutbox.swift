import Foundation
import LookoutConfig
import LookoutModules
import LookoutStore
import NightscoutKit
import LookoutWire

/// The durable notification queue of one state database: every message is stored before it is
/// sent, under an id that makes queuing it twice a no-op; an attempt first claims the item in the
/// database, so two processes (or a drain and a direct attempt) never send it twice; failures
/// that may pass are retried with backoff (2 s doubling to 5 min, ±20 %), others stay `failed`.
/// A sender that dies mid-send leaves a claim that expires after two minutes; the item is then
/// sent again (at most one duplicate, only after a crash during that one send).
final class NotifyOutbox: Sendable {
    let store: any StateBackend
    /// The newest sender (a reloaded script may bring a changed config).
    private let currentSender: Locked<NotifySender>
    var sender: NotifySender { currentSender.withLock { $0 } }
    let policy = RetryPolicy(initialDelay: 2, maximumDelay: 300)
    private let drainer = Locked<BackgroundDrainer?>(nil)

    private static let outboxes = Locked<[String: NotifyOutbox]>([:])

    /// The process's queue for `store` (one drainer per database), sending with `sender` from now on.
    static func shared(store: any StateBackend, sender: NotifySender) -> NotifyOutbox {
        let (outbox, created) = outboxes.withLock { all -> (NotifyOutbox, Bool) in
            if let existing = all[store.identity] {
                existing.currentSender.withLock { $0 = sender }
                return (existing, false)
            }
            let outbox = NotifyOutbox(store: store, sender: sender)
            all[store.identity] = outbox
            return (outbox, true)
        }
        if created { outbox.kick() }
        return outbox
    }

    init(store: any StateBackend, sender: NotifySender) {
        self.store = store
        self.currentSender = Locked(sender)
    }

    /// Stores a message (before anything is sent). A stored id returns the stored item unchanged.
    func enqueue(_ message: NotifyMessage) async throws -> NotifyItem {
        try await store.insertNotification(message, now: Date())
    }

    /// Attempts under way in this process, by id: a second attempt of the same item (the drainer
    /// and `notify.send`) waits for the first one's outcome.
    private let inFlight = Locked<[String: Task<NotifyItem?, Never>]>([:])

    /// Sends an item now if it is pending (whatever its due time, when `force`) and no one else is
    /// sending it; returns the item as stored afterwards. While this process sends it, a second
    /// call waits for that send's outcome; while another process does, it returns the item as
    /// `sending`.
    @discardableResult
    func attempt(_ id: String, force: Bool = true) async -> NotifyItem? {
        let task = inFlight.withLock { running -> Task<NotifyItem?, Never> in
            if let existing = running[id] { return existing }
            let task = Task { await self.perform(id, force: force) }
            running[id] = task
            return task
        }
        let result = await task.value
        inFlight.withLock { running in
            if running[id] == task { running[id] = nil }
        }
        return result
    }

    private func perform(_ id: String, force: Bool) async -> NotifyItem? {
        guard var item = try? await store.claimNotification(id: id, now: Date(), force: force) else {
            return try? await store.notification(id: id)
        }
        item.attempts += 1
        switch await sender.deliver(item.message) {
        case .sent:
            item.state = .sent
            item.sentAt = Date()
            item.lastError = nil
            item.lastStatus = nil
        case .retry(let error, let status, let after):
            item.state = .pending
            item.lastError = error
            item.lastStatus = status
            let wait = policy.delay(afterAttempts: item.attempts, retryAfter: after, random: Double.random(in: 0..<1))
            item.nextAttempt = Date().addingTimeInterval(wait)
        case .failed(let error, let status):
            item.state = .failed
            item.lastError = error
            item.lastStatus = status
        }
        // If storing the outcome fails, the claim expires and the item is sent again.
        try? await store.finishNotification(item)
        if item.state == .pending { kick() }
        return item
    }

    /// Sends everything due, oldest first.
    func drain() async {
        while !Task.isCancelled {
            guard let ids = try? await store.dueNotifications(now: Date(), limit: 50), !ids.isEmpty else { return }
            var progressed = false
            for id in ids {
                let item = await attempt(id, force: false)
                if item?.state == .sent || item?.state == .failed { progressed = true }
            }
            if !progressed { return }
        }
    }

    /// Starts the background drainer unless it runs: it drains, sleeps until the next due item
    /// (at most 5 min: a claim another process holds may be released early), and stops when nothing is left.
    public func kick() {
        let drainer = self.drainer.withLock { d -> BackgroundDrainer in
            if let d { return d }
            let store = self.store
            let created = BackgroundDrainer(longestSleep: 300, drain: { [weak self] in await self?.drain() },
                                            nextDue: { try? await store.nextNotificationDue() })
            d = created
            return created
        }
        drainer.kick()
    }
}
