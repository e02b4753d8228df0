import Foundation
import LookoutWire
import LookoutConfig
import Lua

/// The in-process locks of `store.update`, one per (database, script, key), shared by every
/// runtime of the process.
///
/// Waiting never hands the lock over: a released lock wakes every waiter and each tries again
/// (`tryLock`), so a waiter that was cancelled meanwhile cannot leave a lock taken forever.
/// A waiter passes the token of the holder it saw, so a release that happens before it starts
/// waiting is not missed.
final class StoreUpdateLocks: Sendable {
    /// The locks of the process.
    static let shared = StoreUpdateLocks()

    /// What is locked.
    struct Key: Hashable, Sendable {
        let database: String
        let script: String
        let key: String
    }

    /// Who holds a lock: a task of an engine.
    struct Owner: Hashable, Sendable {
        let engine: ObjectIdentifier
        let task: Int
    }

    /// The outcome of `tryLock`.
    enum Attempt: Equatable {
        /// Taken; release with this token.
        case acquired(UInt64)
        /// Held by the holder with this token.
        case busy(holder: UInt64)
        /// Held by the same task already.
        case heldByCaller
    }

    private struct State {
        var holders: [Key: (token: UInt64, owner: Owner)] = [:]
        var waiters: [Key: [UInt64: CheckedContinuation<Void, Never>]] = [:]
        var nextToken: UInt64 = 1
    }

    private let state = Locked(State())

    /// Takes the lock if it is free.
    func tryLock(_ key: Key, owner: Owner) -> Attempt {
        state.withLock { s in
            if let holder = s.holders[key] {
                return holder.owner == owner ? .heldByCaller : .busy(holder: holder.token)
            }
            let token = s.nextToken
            s.nextToken += 1
            s.holders[key] = (token, owner)
            return .acquired(token)
        }
    }

    /// Releases the lock taken with `token` and wakes every waiter of `key`.
    func unlock(_ key: Key, token: UInt64) {
        let woken = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            guard s.holders[key]?.token == token else { return [] }
            s.holders[key] = nil
            return Array((s.waiters.removeValue(forKey: key) ?? [:]).values)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns once `key` is no longer held by `holder` (at once if it is not), or when the
    /// calling task is cancelled.
    func waitForRelease(_ key: Key, holder: UInt64) async {
        let id = state.withLock { s -> UInt64 in
            defer { s.nextToken += 1 }
            return s.nextToken
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if Task.isCancelled || s.holders[key]?.token != holder { return true }
                    s.waiters[key, default: [:]][id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { s -> CheckedContinuation<Void, Never>? in
                let found = s.waiters[key]?.removeValue(forKey: id)
                if s.waiters[key]?.isEmpty == true { s.waiters[key] = nil }
                return found
            }
            continuation?.resume()
        }
    }

    /// Whether any lock is held (tests).
    var isIdle: Bool { state.withLock { $0.holders.isEmpty && $0.waiters.isEmpty } }
}
