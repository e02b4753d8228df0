import Foundation
import LookoutConfig
import LookoutStore
import NightscoutKit

/// The outbox for the shell (`lookout outbox`) and the `outbox` module: find, retry, drop.
public enum OutboxService {
    /// The one item with `id` (ids are UUIDs; an id queued for two sites must be named by both).
    public static func find(_ id: String, store: any StateBackend) async throws -> OutboxItem {
        let items = try await store.outboxItems(identifier: id)
        guard let item = items.first else { throw OutboxServiceError.notFound(id) }
        guard items.count == 1 else { throw OutboxServiceError.ambiguous(id, items.count) }
        return item
    }

    /// Makes an item pending and sends it now when this process can: its queue is open here, or
    /// `config` has the profile that queued it. Otherwise it waits, due now, for the next run
    /// that opens its site. Returns the item as stored afterwards.
    public static func retry(_ id: String, store: any StateBackend, config: HostConfig?,
                             environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> OutboxItem {
        var item = try await find(id, store: store)
        guard item.state != .sent else { return item }
        if let open = NightscoutOutboxes.open(in: store)[item.site] {
            _ = try await open.outbox.retry(id)
            return await open.outbox.attempt(id) ?? item
        }
        if let config, let profile = profileName(ofQueue: item.site),
           let connection = try? NightscoutConnection.profile(profile, config: config, environment: environment),
           OutboxItem.siteKey(for: connection.configuration) + "#" + connection.identity == item.site {
            let client = NightscoutClient(configuration: connection.configuration, timeout: connection.timeout)
            let outbox = Outbox(client: client, store: store, site: item.site)
            _ = try await outbox.retry(id)
            return await outbox.attempt(id) ?? item
        }
        if let config, let outbox = await NorthlightSubmissions.outbox(forQueue: item.site, config: config, store: store,
                                                                       environment: environment) {
            _ = try await outbox.retry(id)
            return await outbox.attempt(id) ?? item
        }
        item.state = .pending
        item.nextAttempt = Date()
        try await store.update(item)
        return item
    }

    /// Removes an item for good.
    public static func drop(_ id: String, store: any StateBackend) async throws {
        let item = try await find(id, store: store)
        _ = try await store.delete(site: item.site, identifier: item.identifier)
    }

    /// The profile of a queue key `…#profile:NAME`.
    static func profileName(ofQueue queue: String) -> String? {
        guard let range = queue.range(of: "#profile:", options: .backwards) else { return nil }
        return String(queue[range.upperBound...])
    }
}

/// Why an outbox item cannot be acted on.
public enum OutboxServiceError: Error, CustomStringConvertible, Equatable {
    /// No item has the id.
    case notFound(String)
    /// Several sites have an item with the id.
    case ambiguous(String, Int)

    public var description: String {
        switch self {
        case .notFound(let id): return "no outbox item \(id)"
        case .ambiguous(let id, let n): return "outbox item \(id) exists for \(n) sites"
        }
    }
}
