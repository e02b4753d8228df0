import Foundation
import LookoutWire
import LookoutConfig
import NightscoutKit

/// The durable upload queue of one site: every upload is stored before it is sent, sent with a
/// client-made identifier (so re-sending is idempotent), retried with backoff while the failure
/// may pass, and kept with its error when it cannot succeed.
///
/// ```swift
/// let outbox = Outbox(client: client, store: store)
/// let item = try await outbox.enqueue(.treatments, identifier: id, body: json, source: "alerts.lua")
/// let sent = await outbox.attempt(item.identifier)      // try now
/// await outbox.drain()                                  // later: everything due
/// ```
public actor Outbox {
    /// What sends the items (a Nightscout client, or another service's sender).
    public nonisolated let sender: any OutboxSender
    /// The queue's key in the store: by default the client's site (`OutboxItem.siteKey(for:)`).
    public nonisolated let site: String
    /// The storage.
    public nonisolated let store: any OutboxStore
    /// Backoff and retry classification.
    public nonisolated let policy: RetryPolicy
    private let now: @Sendable () -> Date
    private let random: @Sendable () -> Double
    /// Sends under way, by identifier: a second attempt of the same item waits for the first.
    private var inFlight: [String: Task<OutboxItem, Never>] = [:]

    /// An outbox for `client`'s site over `store`. Give `site` to keep separate queues for one
    /// site (e.g. one per set of credentials, so each item is sent with the credentials that
    /// queued it).
    public init(client: NightscoutClient, store: any OutboxStore, site: String? = nil, policy: RetryPolicy = RetryPolicy(),
                now: @escaping @Sendable () -> Date = { Date() },
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.init(sender: NightscoutOutboxSender(client: client), site: site ?? OutboxItem.siteKey(for: client.configuration),
                  store: store, policy: policy, now: now, random: random)
    }

    /// An outbox whose items `sender` sends, under the queue key `site` (items of other
    /// services: their sender maps its errors to `OutboxSendError` for the retry rules).
    public init(sender: any OutboxSender, site: String, store: any OutboxStore, policy: RetryPolicy = RetryPolicy(),
                now: @escaping @Sendable () -> Date = { Date() },
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.sender = sender
        self.site = site
        self.store = store
        self.policy = policy
        self.now = now
        self.random = random
    }

    /// Stores an upload (before anything is sent) and returns it. Queuing an identifier that is
    /// already queued returns the stored item unchanged.
    /// - Parameters:
    ///   - identifier: the document's `identifier`, already inside `body`.
    ///   - body: the document as JSON.
    ///   - source: who queued it, for the user (a script name).
    ///   - quota: what `source` may keep waiting (`OutboxQuotaExceeded` when full; nothing
    ///     queued is ever dropped to make room).
    public func enqueue(_ collection: V3Collection, identifier: String, body: Data, source: String?,
                        quota: OutboxQuota? = nil) async throws -> OutboxItem {
        try await enqueue(collectionName: collection.rawValue, identifier: identifier, body: body, source: source, quota: quota)
    }

    /// Stores an item of any kind (`collectionName` tells the sender what it is), like
    /// `enqueue(_:identifier:body:source:quota:)`.
    public func enqueue(collectionName: String, identifier: String, body: Data, source: String?,
                        quota: OutboxQuota? = nil) async throws -> OutboxItem {
        guard !identifier.isEmpty else { throw NightscoutError.invalidRequest("an outbox item needs an identifier") }
        let item = OutboxItem(identifier: identifier, site: site, collectionName: collectionName, body: body,
                              source: source, created: now())
        if let quota { return try await store.insert(item, quota: quota) }
        return try await store.insert(item)
    }

    /// Sends one pending item now, whatever its due time, and stores the outcome: `sent`,
    /// `pending` with the next due time, or `failed`. Returns the stored item (`nil` if unknown).
    /// An item already being sent, sent or failed is returned as it is.
    @discardableResult
    public func attempt(_ identifier: String) async -> OutboxItem? {
        guard let item = try? await store.item(site: site, identifier: identifier) else { return nil }
        guard item.state == .pending else { return item }
        return await send(item)
    }

    /// What a drain did.
    public struct DrainReport: Sendable, Equatable {
        /// Items stored by the server.
        public var sent = 0
        /// Items that will be tried again later.
        public var retrying = 0
        /// Items that stopped with an error that retrying cannot fix.
        public var failed = 0
        /// An empty report.
        public init() {}
    }

    /// Sends every item due now (every pending item when `ignoringBackoff`), oldest first, until
    /// none is left or the network fails (the rest then wait for their next due time too).
    @discardableResult
    public func drain(limit: Int = 10_000, ignoringBackoff: Bool = false) async -> DrainReport {
        var report = DrainReport()
        var budget = limit
        while budget > 0, !Task.isCancelled {
            guard let batch = try? await store.due(site: site, now: ignoringBackoff ? .distantFuture : now(), limit: min(budget, 100)), !batch.isEmpty else { break }
            var networkDown = false
            for item in batch where inFlight[item.identifier] == nil {
                budget -= 1
                let result = await send(item)
                switch result.state {
                case .sent: report.sent += 1
                case .failed: report.failed += 1
                case .pending:
                    report.retrying += 1
                    networkDown = true
                }
                if networkDown || Task.isCancelled { break }
            }
            if networkDown { break }
        }
        return report
    }

    /// The earliest due time of a pending item, if any.
    public func nextDue() async -> Date? {
        (try? await store.items(site: site, states: [.pending], limit: 10_000))?.map(\.nextAttempt).min()
    }

    /// Makes a failed (or waiting) item pending and due now. Returns it, or nil if unknown.
    @discardableResult
    public func retry(_ identifier: String) async throws -> OutboxItem? {
        guard var item = try await store.item(site: site, identifier: identifier), item.state != .sent else {
            return try await store.item(site: site, identifier: identifier)
        }
        item.state = .pending
        item.nextAttempt = now()
        try await store.update(item)
        return item
    }

    /// Sends an item once. An attempt while the same item is being sent waits for that send and
    /// returns its outcome; an item no longer pending (a concurrent drain sent it) is returned as
    /// stored.
    private func send(_ candidate: OutboxItem) async -> OutboxItem {
        if let running = inFlight[candidate.identifier] { return await running.value }
        let task = Task { await self.perform(candidate) }
        inFlight[candidate.identifier] = task
        let result = await task.value
        inFlight[candidate.identifier] = nil
        return result
    }

    private func perform(_ candidate: OutboxItem) async -> OutboxItem {
        guard let stored = try? await store.item(site: site, identifier: candidate.identifier) else { return candidate }
        guard stored.state == .pending else { return stored }
        var item = stored
        item.attempts += 1
        do {
            let deduplicated = try await sender.send(item)
            item.state = .sent
            item.sentAt = now()
            item.deduplicated = deduplicated
            item.lastError = nil
            item.lastStatus = nil
        } catch {
            let other = error as? OutboxSendError
            item.lastError = (error as? NightscoutError)?.description ?? other?.description ?? String(describing: error)
            item.lastStatus = (error as? NightscoutError)?.status ?? other?.status
            if RetryPolicy.isRetryable(error) {
                item.state = .pending
                let wait = policy.delay(afterAttempts: item.attempts, retryAfter: (error as? NightscoutError)?.retryAfter ?? other?.retryAfter,
                                        random: random())
                item.nextAttempt = now().addingTimeInterval(wait)
            } else {
                item.state = .failed
            }
        }
        // If storing the outcome fails the item stays pending and is sent again: the server
        // deduplicates it by identifier.
        try? await store.update(item)
        return item
    }
}
