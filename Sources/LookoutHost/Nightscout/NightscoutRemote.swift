import Foundation
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

/// A client's remote-command setup: its settings, and the guard every script of the process
/// shares for its queue (so limits hold across scripts and concurrent tasks).
struct NightscoutRemote: Sendable {
    let settings: NightscoutRemoteSettings
    let queue: String
    let openStore: @Sendable () throws -> StateStore
    let confirmationBox: RemoteConfirmation?

    /// The question to ask before sending, when a terminal user is there to answer.
    var confirmation: (@Sendable (String) async -> Bool)? { confirmationBox?.asker }

    private static let guards = Locked<[String: RemoteCommandGuard]>([:])

    /// The process's guard for this queue and state database, auditing to the database. A guard
    /// made with other limits (the config changed) is replaced; the new one reloads the recent
    /// commands from the audit log, so nothing is forgotten.
    func guardian() throws -> RemoteCommandGuard {
        let store = try openStore()
        let key = store.identity + "\n" + queue
        let limits = settings.limits
        return try Self.guards.withLock { guards in
            if let existing = guards[key], existing.limits == limits { return existing }
            let made = try RemoteCommandGuard(limits: limits, auditLog: store, history: store)
            guards[key] = made
            return made
        }
    }
}
