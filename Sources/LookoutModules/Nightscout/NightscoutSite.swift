import Foundation
import LookoutWire
import LookoutConfig
import Lua
import NightscoutKit

/// The object behind a script's Nightscout client (`local home = nightscout.client "home"`).
///
/// It wraps a `NightscoutClient`, which is immutable and shared: clients for the same profile
/// and configuration are one client per process (`NightscoutClientPool`), so every script of a
/// `lookout serve` shares its JWT and its API decision.
final class NightscoutSite: LuaObject {
    /// The userdata type.
    static let type = LuaObjectType(name: "lookout.nightscout.client", displayName: "nightscout client")

    /// The client.
    public let client: NightscoutClient
    /// The profile name, or the host for `nightscout.connect`.
    public let label: String
    /// The outbox queue of this client: site and credential identity (`…#profile:home`).
    let queue: String
    /// Opens the queue's outbox (off the Lua thread).
    let outboxes: NightscoutOutboxes.Opener
    /// Loop remote commands: limits, OTP, guard.
    let remote: NightscoutRemote
    /// The unit people read: the profile's `units`, or the site's once `units()` asked (Lua thread only).
    var units: GlucoseText.Unit?

    init(client: NightscoutClient, label: String, queue: String, outboxes: NightscoutOutboxes.Opener, remote: NightscoutRemote, units: GlucoseText.Unit? = nil) {
        self.units = units
        self.client = client
        self.label = label
        self.queue = queue
        self.outboxes = outboxes
        self.remote = remote
    }

    var luaDescription: String { "nightscout client \(label) (\(client.configuration.siteURL.absoluteString))" }
    func luaClose(engine: LuaEngine) {}

    /// Runs Kit work for a script: the call waits, and Kit errors become `nil, err` with the
    /// Nightscout error fields.
    static func wait<T: Sendable>(_ call: LuaCall, _ what: String, _ operation: @escaping @Sendable () async throws -> T,
                                  deliver: @escaping (LuaStack, T) -> Int32) throws(LuaRaise) -> LuaReturn {
        try call.request(what, {
            do { return try await operation() } catch { throw LuaErrorInfo.nightscout(error) }
        }, deliver: deliver)
    }
}

/// One `NightscoutClient` per (site and credential identity, configuration) for the whole process.
public enum NightscoutClientPool {
    private static let clients = Locked<[String: NightscoutClient]>([:])

    /// The pooled client for `key`, replaced when the configuration changed.
    public static func client(key: String, configuration: NightscoutConfiguration, timeout: TimeInterval) -> NightscoutClient {
        clients.withLock { pool in
            if let existing = pool[key], existing.configuration == configuration, existing.timeout == timeout {
                return existing
            }
            let client = NightscoutClient(configuration: configuration, timeout: timeout)
            pool[key] = client
            return client
        }
    }
}
