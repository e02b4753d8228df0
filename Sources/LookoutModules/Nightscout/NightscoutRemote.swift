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
/// site's key (`RemoteCommandSite.key(for:)`), so every script, profile, process and
/// `serve --isolate` worker naming the site shares one budget. The limits are the strictest of
/// every profile naming the site (`NightscoutRemoteSettings.read`).
struct NightscoutRemote: Sendable {
    let settings: NightscoutRemoteSettings
    /// The client's outbox queue (site and credential identity), for Remote 2.0 outcome tracking.
    let queue: String
    /// The budget's key: the site's normalised origin and path.
    let site: String
    let openStore: @Sendable () throws -> any StateBackend
    let confirmationBox: RemoteConfirmation?

    /// The question to ask before sending, when a terminal user is there to answer.
    var confirmation: (@Sendable (String) async -> Bool)? { confirmationBox?.asker }

    private static let guards = Locked<[String: RemoteCommandGuard]>([:])

    /// The process's guard for this site, limits and state database. A guard made with other
    /// limits (the config changed) is replaced; budgets live in the database, so nothing is
    /// forgotten.
    func guardian() throws -> RemoteCommandGuard {
        let store = try openStore()
        let limits = settings.limits
        let key = store.identity + "\n" + site + "\n" + (limits.live ? "live" : "dry-run")
        return try Self.guards.withLock { guards in
            if let existing = guards[key], existing.limits == limits { return existing }
            let made = try RemoteCommandGuard(limits: limits, ledger: store)
            guards[key] = made
            return made
        }
    }
}
