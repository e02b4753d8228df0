import Foundation
import LookoutConfig
import NightscoutKit

/// Durable storage of outbox items. Lookout keeps them in its SQLite state store; tests and
/// Swift users may use `InMemoryOutboxStore`.
public protocol OutboxStore: Sendable {
    /// Stores a new item, or returns the stored one when an item with the same site and
    /// identifier exists (queuing the same document twice sends it once).
    func insert(_ item: OutboxItem) async throws -> OutboxItem
    /// Like `insert(_:)`, first checking (in the same transaction) that the item's source stays
    /// within `quota` with its pending and failed items; a full quota throws
    /// `OutboxQuotaExceeded` and stores nothing. An item already queued is returned as stored.
    func insert(_ item: OutboxItem, quota: OutboxQuota) async throws -> OutboxItem
    /// Replaces a stored item (matched by site and identifier).
    func update(_ item: OutboxItem) async throws
    /// One item.
    func item(site: String, identifier: String) async throws -> OutboxItem?
    /// Pending items of a site due at `now`, oldest first.
    func due(site: String, now: Date, limit: Int) async throws -> [OutboxItem]
    /// Items in the given states (all sites when `site` is nil), oldest first.
    func items(site: String?, states: Set<OutboxItem.State>, limit: Int) async throws -> [OutboxItem]
    /// Removes an item; `false` when there was none.
    func delete(site: String, identifier: String) async throws -> Bool
}

/// An `OutboxStore` in memory (lost when the process ends).
public actor InMemoryOutboxStore: OutboxStore {
    private var items: [String: OutboxItem] = [:]
    private var order: [String] = []

    /// An empty store.
    public init() {}

    private func key(_ site: String, _ id: String) -> String { site + "\n" + id }

    /// Stores a new item, or returns the stored one when the site and identifier are already queued.
    public func insert(_ item: OutboxItem) -> OutboxItem {
        let k = key(item.site, item.identifier)
        if let existing = items[k] { return existing }
        items[k] = item
        order.append(k)
        return item
    }

    /// Stores a new item if its source stays within `quota`.
    public func insert(_ item: OutboxItem, quota: OutboxQuota) throws -> OutboxItem {
        if let existing = items[key(item.site, item.identifier)] { return existing }
        let waiting = items.values.filter { $0.source == item.source && $0.state != .sent }
        try quota.check(item, queuedItems: waiting.count, queuedBytes: waiting.reduce(0) { $0 + $1.body.count })
        return insert(item)
    }

    /// Replaces the stored item with the same site and identifier (a sent item keeps no body).
    public func update(_ item: OutboxItem) {
        var item = item
        if item.state == .sent { item.body = Data() }
        items[key(item.site, item.identifier)] = item
    }

    /// The item with `identifier` on `site`, or `nil`.
    public func item(site: String, identifier: String) -> OutboxItem? { items[key(site, identifier)] }

    /// Up to `limit` pending items of `site` due at `now`, in insertion order.
    public func due(site: String, now: Date, limit: Int) -> [OutboxItem] {
        Array(order.compactMap { items[$0] }.filter { $0.site == site && $0.state == .pending && $0.nextAttempt <= now }.prefix(limit))
    }

    /// Up to `limit` items in `states` (all sites when `site` is `nil`), in insertion order.
    public func items(site: String?, states: Set<OutboxItem.State>, limit: Int) -> [OutboxItem] {
        Array(order.compactMap { items[$0] }.filter { (site == nil || $0.site == site) && states.contains($0.state) }.prefix(limit))
    }

    /// Removes an item; `false` when there was none.
    public func delete(site: String, identifier: String) -> Bool {
        let k = key(site, identifier)
        guard items.removeValue(forKey: k) != nil else { return false }
        order.removeAll { $0 == k }
        return true
    }
}

extension OutboxQuota {
    /// Throws `OutboxQuotaExceeded` when `item`'s source, with `queuedItems` items of
    /// `queuedBytes` bytes waiting, may not add it.
    func check(_ item: OutboxItem, queuedItems: Int, queuedBytes: Int) throws(OutboxQuotaExceeded) {
        try check(source: item.source, bodyBytes: item.body.count, queuedItems: queuedItems, queuedBytes: queuedBytes)
    }
}
