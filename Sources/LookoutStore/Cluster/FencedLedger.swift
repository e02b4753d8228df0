import Foundation
import NightscoutKit

/// The remote-command guard's ledger for a script that runs under a cluster lease
/// (`serve --cluster`): every reservation checks, inside its own transaction, that the lease is
/// still this instance's, so an instance that was paused or cut off and wakes up after its
/// lease moved on cannot reserve (and so cannot send) a command. Its refusal is audited by the
/// guard like any ledger failure (`history_unavailable`, naming the lost lease).
public struct FencedLedger: RemoteCommandLedger {
    /// The state database.
    public let store: any StateBackend
    /// The holding every reservation requires.
    public let fence: LeaseFence

    /// A ledger over `store` requiring `fence`.
    public init(store: any StateBackend, fence: LeaseFence) {
        self.store = store
        self.fence = fence
    }

    public func append(_ entry: AuditEntry) async throws { try await store.append(entry) }

    public func reserve<T: Sendable>(
        site: String, keys: [String], window: TimeInterval, now given: Date?,
        _ decide: @escaping @Sendable ([RemoteCommandRecord], Date) -> (entry: AuditEntry, result: T)
    ) async throws -> T {
        try await store.reserve(site: site, keys: keys, window: window, now: given, fence: fence, decide)
    }

    public func claimOneTimeCode(_ code: String, counter: UInt64, pumps: [String], now: Date) async throws -> Bool {
        try await store.claimOneTimeCode(code, counter: counter, pumps: pumps, now: now)
    }
}
