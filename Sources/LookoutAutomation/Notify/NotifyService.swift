import Foundation
import Logging
import LookoutConfig
import LookoutStore

/// The notification queue for the shell (`lookout outbox`): list, retry, drop.
public enum NotifyService {
    /// Makes a failed or waiting notification pending and sends it now with the channels of
    /// `config`. Returns the item as stored afterwards, or nil when there is no such id.
    public static func retry(_ id: String, store: any StateBackend, config: HostConfig, logger: Logger,
                             environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> NotifyItem? {
        guard try await store.retryNotification(id: id, now: Date()) else { return nil }
        let sender = NotifySender(config: config, environment: environment, logger: logger, openStore: { store })
        return await NotifyOutbox(store: store, sender: sender).attempt(id)
    }

    /// Items as an aligned table's rows: id, state, tries, channel, title, queued, when, last error.
    public static func rows(_ items: [NotifyItem]) -> [[String]] {
        let time = ISO8601DateFormatter()
        return items.map { item in
            let when = item.state == .pending ? "next " + time.string(from: item.nextAttempt)
                : item.state == .sent ? "sent " + time.string(from: item.sentAt ?? item.created) : ""
            return [item.id, item.state.rawValue, String(item.attempts), item.channel, item.title,
                    time.string(from: item.created), when, item.lastError ?? ""]
        }
    }
}
