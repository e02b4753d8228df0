import Foundation
import Logging
import LookoutConfig
import LookoutModules
import LookoutStore
import Lua
import NightscoutKit
import SignalKKit
import LookoutWire

/// What one delivery attempt did.
enum NotifyOutcome: Sendable, Equatable {
    /// Delivered (or handed to the Nightscout outbox).
    case sent
    /// Failed in a way that may pass (network, timeout, 408, 429, 5xx); `after` is the server's
    /// `Retry-After`.
    case retry(String, status: Int?, after: TimeInterval?)
    /// Failed in a way retrying cannot fix (configuration, 4xx).
    case failed(String, status: Int?)
}

/// Delivers one queued message on its channel. Secrets are read from the config here, at send
/// time, and removed from every error message.
struct NotifySender: Sendable {
    let config: HostConfig
    let environment: [String: String]
    let logger: Logger
    let openStore: @Sendable () throws -> any StateBackend

    /// One attempt.
    func deliver(_ message: NotifyMessage) async -> NotifyOutcome {
        let channel: NotifyChannel
        do throws(LuaErrorInfo) { channel = try NotifyChannel.named(message.channel, config: config) } catch { return .failed(error.message, status: nil) }
        switch channel.kind {
        case .log:
            logger.log(level: Self.logLevel(message.severity), "notify \(channel.name): [\(message.severity)] \(message.line)")
            return .sent
        case .webhook, .ntfy, .pushover, .telegram:
            return await http(message, channel)
        case .nightscout:
            return await nightscout(message, channel)
        case .signalk:
            return await signalK(message, channel)
        }
    }

    static func logLevel(_ severity: String) -> Logger.Level {
        switch severity {
        case "urgent": return .critical
        case "warning": return .warning
        default: return .notice
        }
    }

    private func http(_ message: NotifyMessage, _ channel: NotifyChannel) async -> NotifyOutcome {
        let prepared: NotifyHTTPRequest
        let ack = await ackLink(message)
        do throws(LuaErrorInfo) {
            prepared = try NotifyHTTPRequest.make(message, channel: channel, config: config, environment: environment, ack: ack)
        } catch {
            return .failed(error.message, status: nil)
        }
        let result: HTTPResult
        do throws(HTTPFailure) { result = try await HTTPTransport.perform(prepared.request) } catch {
            let text = NotifyHTTPRequest.redact(error.luaError.message, prepared.secrets)
            return error.luaError.retryable ? .retry(text, status: nil, after: nil) : .failed(text, status: nil)
        }
        if (200..<300).contains(result.status) { return .sent }
        var detail = String(decoding: result.body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        detail = NotifyHTTPRequest.redact(detail, prepared.secrets)
        let text = NotifyHTTPRequest.redact("\(prepared.request.summary): HTTP \(result.status)", prepared.secrets)
            + (detail.isEmpty ? "" : ": " + detail)
        if result.status == 408 || result.status == 429 || result.status >= 500 {
            let after = result.joinedHeaders["retry-after"].flatMap { HTTPDate.retryAfter($0) }  // capped by the policy
            return .retry(text, status: result.status, after: after)
        }
        return .failed(text, status: result.status)
    }

    /// The ack link of a message about an alert episode, made now (after the script's code ran:
    /// it is never stored with the message, and only HTTP channels to people carry it). None when
    /// the message is not about an episode, is a "resolved", names an alert another script
    /// defined or an episode older than the alert's current one, or no status server is known.
    func ackLink(_ message: NotifyMessage) async -> NotifyAckLink? {
        guard let alert = message.alertID, let episode = message.episode, message.kind != "resolved",
              let base = NotifyAckLink.base(config: config)
        else { return nil }
        // The link key lives beside the SQLite file; a PostgreSQL state store has no local
        // folder of its own here, so its messages carry no ack link (yet).
        guard let store = try? openStore(), let databaseFile = (store as? StateStore)?.path else { return nil }
        if let record = try? await store.alertRecord(id: alert),
           record.status.script != message.source || record.status.episode > episode {
            return nil
        }
        let directory = (databaseFile as NSString).deletingLastPathComponent
        guard let key = try? AckLinkKey.load(stateDirectory: directory) else { return nil }
        let link = key.link(alert: alert, episode: episode, now: Date())
        return NotifyAckLink(url: link.url(base: base.url), token: link.token, isPublic: base.isPublic)
    }

    /// A Nightscout treatment with `eventType = "Announcement"`, queued in the site's outbox
    /// (so the site's own retries and `lookout outbox` apply) with an identifier made from the
    /// message id (queuing it twice stores it once).
    private func nightscout(_ message: NotifyMessage, _ channel: NotifyChannel) async -> NotifyOutcome {
        do {
            let site = try channel.setting("site", required: true)!
            let connection = try NightscoutConnection.profile(site, config: config, environment: environment)
            let queue = OutboxItem.siteKey(for: connection.configuration) + "#" + connection.identity
            let client = NightscoutClientPool.client(key: queue, configuration: connection.configuration, timeout: connection.timeout)
            let (outbox, drainer) = NightscoutOutboxes.outbox(for: client, queue: queue, store: try openStore(), policy: RetryPolicy())
            let identifier = Self.nightscoutIdentifier(message.id)
            let document: [String: Any] = [
                "identifier": identifier, "eventType": "Announcement", "isAnnouncement": true, "notes": message.line,
                "enteredBy": message.source.map { "lookout " + $0 } ?? "lookout", "created_at": message.isoTime,
                "date": Int(message.time), "app": "lookout",
            ]
            let body = try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])
            _ = try await outbox.enqueue(.treatments, identifier: identifier, body: body, source: message.source)
            drainer.kick()
            return .sent
        } catch let error as LuaErrorInfo {
            return .failed(error.message, status: nil)
        } catch {
            return .failed(LuaErrorInfo(error).message, status: nil)
        }
    }

    /// The Nightscout identifier of a notification: a UUID v5 of its id.
    static func nightscoutIdentifier(_ id: String) -> String {
        NightscoutIdentifier.uuidV5(namespace: Array("LookoutNotify!!!".utf8), name: id)
    }

    /// A Signal K notification: a delta on `notifications.<path>.<alert id>` (path default
    /// `lookout`) with value `{state, method, message}`, published on a short-lived stream.
    private func signalK(_ message: NotifyMessage, _ channel: NotifyChannel) async -> NotifyOutcome {
        let connection: SignalKConnection
        let delta: SignalKDelta
        do {
            let server = try channel.setting("server", required: true)!
            connection = try SignalKConnection.profile(server, config: config, environment: environment)
            delta = try Self.signalKDelta(message, base: try channel.setting("path") ?? "notifications.lookout")
        } catch let error as LuaErrorInfo {
            return .failed(error.message, status: nil)
        } catch {
            return .failed(LuaErrorInfo(error).message, status: nil)
        }
        var configuration = connection.configuration
        configuration.subscribe = .none
        let token = connection.token
        let stream = SignalKStream(configuration: configuration, tokenProvider: token.map { t in { @Sendable () async -> String? in t } })
        let events = await stream.events()
        let published = delta.updates[0].values[0]
        // Delivered when the server echoes the value back on a subscription to its path (a server
        // that refuses the write, e.g. a read-only token, ignores it silently: then it is retried).
        let confirmed = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await event in events {
                    switch event {
                    case .state(.connected):
                        await stream.subscribe([SignalKSubscription(path: published.path)])
                        guard await stream.publish(delta) else { return false }
                    case .delta(_, let changes):
                        if changes.contains(where: { $0.path == published.path && $0.value == published.value }) { return true }
                    default: break
                    }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(connection.timeout))
                return false
            }
            await stream.start()
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        await stream.close()
        return confirmed ? .sent
            : .retry("signalk \(connection.label): the notification was not confirmed within \(Quantities.formatDuration(connection.timeout))"
                     + " (not connected, or the token cannot write)", status: nil, after: nil)
    }

    /// The Signal K notification states: urgent → alarm, warning → warn, info → alert (or
    /// the message's own `state`).
    static func signalKDelta(_ message: NotifyMessage, base: String) throws -> SignalKDelta {
        guard base == "notifications" || base.hasPrefix("notifications.") else {
            throw LuaErrorInfo(code: "config", message: "[notify.\(message.channel)] path: must start with \"notifications.\", got \"\(base)\"",
                               service: "notify")
        }
        let state = message.state ?? (["urgent": "alarm", "warning": "warn"][message.severity] ?? "alert")
        let method: [JSONValue] = message.severity == "info" || state == "normal" ? [.string("visual")] : [.string("visual"), .string("sound")]
        let leaf = (message.alertID ?? "message").replacingOccurrences(of: ".", with: "_")
        let value = JSONValue.object(["state": .string(state), "method": .array(method), "message": .string(message.line)])
        return SignalKDelta(updates: [SignalKUpdate(dollarSource: "lookout", timestamp: Date(timeIntervalSince1970: Double(message.time) / 1000),
                                          values: [SignalKPathValue(path: base + "." + leaf, value: value)])])
    }
}
