import Foundation
import Logging
import LookoutConfig
import LookoutModules
import LookoutStore
import Lua

/// `notify`: messages to people through channels configured as `[notify.NAME]` profiles (log,
/// webhook, ntfy, Pushover, Telegram, Nightscout announcements, Signal K notifications).
///
/// Every message goes through the durable notification queue (`NotifyOutbox`) before it is sent.
/// A channel with `dry_run = true` only logs what it would send; under `SideEffects.record`
/// (`lookout test`) nothing is queued or sent and a `notify` side effect is recorded instead.
/// See `Stubs/notify.lua`.
struct NotifyModule: LuaModule {
    let name = "notify"
    var stub: String { String(decoding: PackageResources.notify_lua, as: UTF8.self) }

    let config: HostConfig
    let environment: [String: String]
    let logger: Logger
    let sideEffects: SideEffects
    let openStore: @Sendable () throws -> any StateBackend

    /// The module for scripts, queuing in the state database at `paths`.
    init(config: HostConfig, paths: LookoutPaths, logger: Logger, sideEffects: SideEffects,
         environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.init(config: config, environment: environment, logger: logger, sideEffects: sideEffects) { try StateBackends.shared(paths: paths) }
    }

    /// The module over an open store (tests).
    init(config: HostConfig, environment: [String: String], logger: Logger, sideEffects: SideEffects = .live,
         openStore: @escaping @Sendable () throws -> any StateBackend) {
        self.config = config
        self.environment = environment
        self.logger = logger
        self.sideEffects = sideEffects
        self.openStore = openStore
    }

    static let sendKeys: Set<String> = ["title", "message", "severity", "alert_id", "id", "wait", "kind", "state", "episode"]

    /// How long `send` waits for the first attempt before answering `pending` (it goes on).
    static let firstAttemptWindow: TimeInterval = 5

    func push(into engine: LuaEngine, stack: LuaStack) throws {
        let config = self.config, sideEffects = self.sideEffects, logger = self.logger
        let sender = NotifySender(config: config, environment: environment, logger: logger, openStore: openStore)
        let openStore = self.openStore
        engine.pushLibrary([
            "send": { call in
                let channelName = try call.string(1)
                let (message, wait) = try Self.message(call, channel: channelName)
                // A recorded run shows the notification even when the channel is not configured
                // (a test config may lack it), with the problem; a live run fails.
                var channel: NotifyChannel?, configError: LuaErrorInfo?
                do throws(LuaErrorInfo) { channel = try NotifyChannel.named(channelName, config: config) } catch { configError = error }
                if let log = sideEffects.log {
                    var details = Self.details(message, channel)
                    if let configError { details["config_error"] = configError.message }
                    log.append(SideEffect(time: call.engine.clock.now(), kind: "notify", target: channelName,
                                          summary: "[\(message.severity)] \(message.line)", details: details))
                    return call.returning(Self.value(id: message.id, channel: channelName, state: "recorded"))
                }
                guard let channel else { return call.failure(configError ?? LuaErrorInfo(code: "config", message: "no channel")) }
                if channel.dryRun {
                    logger.info("notify \(channelName) (dry run, not sent): [\(message.severity)] \(message.line)")
                    return call.returning(Self.value(id: message.id, channel: channelName, state: "dry_run"))
                }
                let engine = call.engine
                return try call.wait("notify.send \(channelName)", {
                    let store = try openStore()
                    // Alerts' notifications (the alert library names its alert) still go out on a
                    // full disk, into the room kept free; a script's own messages are refused first.
                    if message.alertID == nil { try store.requireRoom() }
                    let outbox = NotifyOutbox.shared(store: store, sender: sender)
                    let item = try await outbox.enqueue(message)
                    guard wait else {
                        Task.detached { await outbox.attempt(item.id, force: false) }
                        return item
                    }
                    return await Self.firstAttempt(outbox, item)
                }) { stack, item in
                    guard item.state == .failed else {
                        stack.push(Self.value(item))
                        return 1
                    }
                    stack.pushNil()
                    engine.push(error: LuaErrorInfo(code: "notify", message: item.lastError ?? "not delivered", status: item.lastStatus,
                                                         service: "notify", details: ["id": .text(item.id)]), on: stack)
                    return 2
                }
            },
            "channels": { call in
                var list: [LuaValue] = []
                for name in config.profiles(service: "notify") {
                    if let channel = try? NotifyChannel.named(name, config: config) {
                        list.append(.object(["name": .text(name), "type": .text(channel.kind.rawValue), "dry_run": .bool(channel.dryRun)]))
                    } else {
                        list.append(.object(["name": .text(name), "type": .text("invalid")]))
                    }
                }
                return call.returning(.array(list))
            },
        ], prefix: "notify.", on: stack)
    }

    /// The message from `notify.send(channel, {…})`, and whether to wait for the first attempt.
    public static func message(_ call: LuaCall, channel: String) throws(LuaRaise) -> (NotifyMessage, Bool) {
        let opts = try call.options(2, name: "msg")
        if let unknown = opts.keys.sorted().first(where: { !sendKeys.contains($0) }) {
            throw call.argumentError(2, "unknown option '\(unknown)' (known: \(sendKeys.sorted().joined(separator: ", ")))")
        }
        func text(_ key: String) throws(LuaRaise) -> String? {
            guard let value = opts[key] else { return nil }
            guard let text = value.text else { throw call.argumentError(2, "msg.\(key): expected a string, got \(value.typeName)") }
            return text
        }
        guard let body = try text("message"), !body.isEmpty else { throw call.argumentError(2, "msg.message: required (a non-empty string)") }
        let severity = try text("severity") ?? "info"
        guard NotifyMessage.severities.contains(severity) else {
            throw call.argumentError(2, "msg.severity: expected \"urgent\", \"warning\" or \"info\", got \"\(severity)\"")
        }
        if let state = try text("state"), !["normal", "alert", "warn", "alarm", "emergency"].contains(state) {
            throw call.argumentError(2, "msg.state: expected normal, alert, warn, alarm or emergency")
        }
        var wait = true
        if let value = opts["wait"] {
            guard case .bool(let b) = value else { throw call.argumentError(2, "msg.wait: expected a boolean") }
            wait = b
        }
        var episode: Int64?
        if let value = opts["episode"] {
            guard case .int(let number) = value, number >= 1 else { throw call.argumentError(2, "msg.episode: expected a positive integer") }
            episode = number
        }
        let time = Int64((call.engine.clock.now().timeIntervalSince1970 * 1000).rounded())
        let id = try text("id") ?? UUID().uuidString.lowercased()
        guard !id.isEmpty, id.utf8.count <= 200 else { throw call.argumentError(2, "msg.id: expected 1 to 200 bytes") }
        let message = NotifyMessage(id: id, channel: channel, title: try text("title") ?? "", message: body, severity: severity,
                                    alertID: try text("alert_id"), kind: try text("kind") ?? "message", time: time,
                                    source: call.engine.options.name, state: try text("state"), episode: episode)
        return (message, wait)
    }

    /// The outcome of the first attempt if it ends within `firstAttemptWindow`, else the item as queued.
    static func firstAttempt(_ outbox: NotifyOutbox, _ item: NotifyItem) async -> NotifyItem {
        await FirstAttempt.result(within: firstAttemptWindow) { await outbox.attempt(item.id, force: false) ?? item } ?? item
    }

    static func details(_ message: NotifyMessage, _ channel: NotifyChannel?) -> [String: String] {
        var details = ["type": channel?.kind.rawValue ?? "unconfigured", "title": message.title, "message": message.message,
                       "severity": message.severity, "kind": message.kind, "id": message.id]
        if let alertID = message.alertID { details["alert_id"] = alertID }
        return details
    }

    static func value(id: String, channel: String, state: String) -> LuaValue {
        .object(["id": .text(id), "channel": .text(channel), "state": .text(state), "attempts": .int(0)])
    }

    /// An item as scripts see it: `{id, channel, state, attempts, error, status, next_attempt, sent_at}`.
    static func value(_ item: NotifyItem) -> LuaValue {
        var fields: [String: LuaValue] = ["id": .text(item.id), "channel": .text(item.channel), "state": .text(item.state.rawValue),
                                          "attempts": .int(Int64(item.attempts))]
        if let error = item.lastError { fields["error"] = .text(error) }
        if let status = item.lastStatus { fields["status"] = .int(Int64(status)) }
        if item.state == .pending { fields["next_attempt"] = .int(Int64(item.nextAttempt.timeIntervalSince1970 * 1000)) }
        if let sent = item.sentAt { fields["sent_at"] = .int(Int64(sent.timeIntervalSince1970 * 1000)) }
        return .object(fields)
    }
}
