import Foundation
import LookoutConfig
import LookoutStore
import NightscoutKit
import LookoutWire

/// The process's outboxes: one `Outbox` per queue (site and credential identity) and state database, each with a background
/// drainer that sends what is due and sleeps until the next retry while anything is pending.
///
/// Uploads from every script of the process (and every runtime of `lookout serve`) go through
/// the same outbox of their site, so two scripts queuing one document send it once.
public enum NightscoutOutboxes {
    private static let outboxes = Locked<[String: (outbox: Outbox, drainer: OutboxDrainer)]>([:])

    /// How a module opens outboxes: its state database and retry timing.
    struct Opener: Sendable {
        let openStore: @Sendable () throws -> any StateBackend
        let policy: RetryPolicy
        /// What one script may keep waiting (`[limits] outbox_items`, `outbox_bytes`).
        var quota: OutboxQuota? = HostConfig.Limits.defaults.outboxQuota

        /// The state database, refusing when it has no room left for a script's write
        /// (`StateStore.requireRoom()`).
        func storeWithRoom() throws -> any StateBackend {
            let store = try openStore()
            try store.requireRoom()
            return store
        }

        /// The outbox of `queue` (see `NightscoutOutboxes.outbox(for:queue:store:policy:)`).
        public func outbox(for client: NightscoutClient, queue: String) throws -> (Outbox, OutboxDrainer) {
            NightscoutOutboxes.outbox(for: client, queue: queue, store: try openStore(), policy: policy)
        }
    }

    /// The outbox of `queue` (site and credential identity) in `store`, sending with `client`
    /// (created on first use; a drain starts at once so uploads left by an earlier run are sent).
    public static func outbox(for client: NightscoutClient, queue: String, store: any StateBackend, policy: RetryPolicy)
        -> (Outbox, OutboxDrainer)
    {
        outbox(queue: queue, store: store) { Outbox(client: client, store: store, site: queue, policy: policy) }
    }

    /// The outbox of `queue` in `store`, made by `make` on first use (other services' queues:
    /// Northlight submissions share the registry, the drainers and `lookout outbox`).
    public static func outbox(queue: String, store: any StateBackend, make: () -> Outbox) -> (Outbox, OutboxDrainer) {
        let key = store.identity + "\n" + queue
        let (entry, created) = outboxes.withLock { all -> ((outbox: Outbox, drainer: OutboxDrainer), Bool) in
            if let existing = all[key] { return (existing, false) }
            let outbox = make()
            let entry = (outbox: outbox, drainer: OutboxDrainer(outbox: outbox))
            all[key] = entry
            return (entry, true)
        }
        if created { entry.drainer.kick() }
        return (entry.outbox, entry.drainer)
    }

    /// The outboxes open in this process for `store`, by site (for `outbox.retry` and `flush`).
    static func open(in store: any StateBackend) -> [String: (outbox: Outbox, drainer: OutboxDrainer)] {
        let prefix = store.identity + "\n"
        return outboxes.withLock { all in
            Dictionary(uniqueKeysWithValues: all.filter { $0.key.hasPrefix(prefix) }.map { ($0.value.outbox.site, $0.value) })
        }
    }
}

/// Sends an outbox's due items in the background: drains, then sleeps until the earliest retry,
/// and stops when nothing is pending. `kick()` starts it again (after a new upload or a retry);
/// a kick during a drain makes the drain look again before it stops.
public final class OutboxDrainer: Sendable {
    /// The outbox whose due items this drainer sends.
    public let outbox: Outbox
    private let drainer: BackgroundDrainer

    init(outbox: Outbox) {
        self.outbox = outbox
        drainer = BackgroundDrainer(drain: { _ = await outbox.drain() }, nextDue: { await outbox.nextDue() })
    }

    /// Starts draining unless a drain is already running.
    public func kick() { drainer.kick() }
}
