import Foundation
import LookoutWire
import LookoutConfig
import LookoutStore
import NightscoutKit

/// Asks the person at the terminal before a live remote command is sent (the REPL sets it;
/// `lookout run` and `serve` have none and follow the config alone).
public final class RemoteConfirmation: Sendable {
    private let ask = Locked<(@Sendable (String) async -> Bool)?>(nil)

    /// No question yet: `install` one.
    public init() {}

    /// Sets the question asker: it shows the text and returns whether the answer was yes.
    public func install(_ asker: @escaping @Sendable (String) async -> Bool) { ask.withLock { $0 = asker } }

    /// The installed asker, if any.
    var asker: (@Sendable (String) async -> Bool)? { ask.withLock { $0 } }
}

/// A client's remote-command setup: its settings, and the guard for its site.
///
/// The budget is not kept here: the guard reserves against the state database's ledger under the
/// keys of what receives the commands (`budgetKeys`: the site's canonical key, the keys of the
/// addresses its host name resolves to, and the Loop device its profile names), so every
/// script, profile, process and `serve --isolate` worker reaching the site or the device,
/// however it is spelled, shares one budget. The limits are the strictest of every profile
/// naming the site (`NightscoutRemoteSettings.read`).
struct NightscoutRemote: Sendable {
    let settings: NightscoutRemoteSettings
    /// The client's outbox queue (site and credential identity), for Remote 2.0 outcome tracking.
    let queue: String
    /// The budget's key: the site's canonical origin and path (`RemoteCommandSite.key(for:)`).
    let site: String
    let openStore: @Sendable () throws -> any StateBackend
    let confirmationBox: RemoteConfirmation?

    /// The question to ask before sending, when a terminal user is there to answer.
    var confirmation: (@Sendable (String) async -> Bool)? { confirmationBox?.asker }

    private static let guards = Locked<[String: (fence: LeaseFence?, guard: RemoteCommandGuard)]>([:])

    /// Resolved site keys by URL, with when they were resolved (looked up again after `resolvedFor`).
    private static let resolved = Locked<[String: (keys: [String], at: Date)]>([:])
    /// How long a host name's addresses are reused.
    static let resolvedFor: TimeInterval = 300

    /// `RemoteCommandSite.keys(for: url)`, resolved at most every `resolvedFor` seconds (blocks
    /// while the host name is resolved).
    static func siteKeys(_ url: URL) -> [String] {
        let now = Date()
        if let cached = resolved.withLock({ $0[url.absoluteString] }), now.timeIntervalSince(cached.at) < resolvedFor {
            return cached.keys
        }
        let keys = RemoteCommandSite.keys(for: url)
        resolved.withLock { $0[url.absoluteString] = (keys, now) }
        return keys
    }

    /// The keys a live command of `client` is reserved under besides `site`: the site's other
    /// keys (the addresses its host name resolves to) and the Loop device the site pushes to
    /// (its newest profile's `loopSettings`), when it can be read. Dry runs use the site's keys
    /// only (no request is made for them).
    func budgetKeys(client: NightscoutClient) async -> [String] {
        let url = client.configuration.siteURL
        var keys = await Task.detached { Self.siteKeys(url) }.value
        if settings.limits.live, let profiles = try? await client.profile(),
           let device = profiles.lazy.compactMap({ RemoteCommandSite.deviceKey(loopSettings: $0.loopSettings) }).first {
            keys.append(device)
        }
        return keys
    }

    /// The process's guard for this site, limits and state database. A guard made with other
    /// limits (the config changed) is replaced; budgets live in the database, so nothing is
    /// forgotten.
    /// A script running under a cluster lease (`fence`) gets a guard whose ledger checks the
    /// lease in every reservation's transaction (``FencedLedger``), one per piece of work.
    func guardian(fence: LeaseFence? = nil) throws -> RemoteCommandGuard {
        let store = try openStore()
        let limits = settings.limits
        let key = store.identity + "\n" + site + "\n" + (limits.live ? "live" : "dry-run") + "\n" + (fence?.work ?? "")
        return try Self.guards.withLock { guards in
            if let existing = guards[key].flatMap({ $0.fence == fence ? $0.guard : nil }), existing.limits == limits {
                return existing
            }
            let made = try fence.map { try RemoteCommandGuard(limits: limits, ledger: FencedLedger(store: store, fence: $0)) }
                ?? RemoteCommandGuard(limits: limits, ledger: store)
            guards[key] = (fence, made)
            return made
        }
    }
}
