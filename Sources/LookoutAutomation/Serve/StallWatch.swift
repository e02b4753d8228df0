import Foundation
import LookoutWire
import LookoutConfig
import LookoutModules
import Lua

/// Watches one served Lua state for a stall (``LuaRuntime/stall(grace:now:)``) and lets callers
/// give up on calls into it: once the state's thread is stuck, every call made through `run`
/// returns nil instead of waiting forever on the stuck executor.
final class StallWatch: Sendable {
    private let state = Locked<(reason: String?, waiters: [Int: @Sendable () -> Void], next: Int)>((nil, [:], 0))
    private let poller: Locked<Task<Void, Never>?> = Locked(nil)

    /// Starts watching `runtime`.
    init(runtime: LuaRuntime, grace: Double) {
        let task = Task { [weak self] in
            guard let reason = await runtime.waitForStall(grace: grace) else { return }
            self?.stalled(reason)
        }
        poller.withLock { $0 = task }
    }

    /// Why the state is stuck, once it is.
    var reason: String? { state.withLock { $0.reason } }

    /// Stops watching.
    func cancel() { poller.withLock { $0?.cancel() } }

    /// Runs `operation` (a call into the runtime) and returns its result, or nil as soon as the
    /// state stalls. The operation itself then never ends; its task is left suspended.
    func run<T: Sendable>(_ operation: @escaping @Sendable () async -> T) async -> T? {
        let first = FirstResult<T?>()
        let id = state.withLock { state -> Int? in
            guard state.reason == nil else { return nil }
            state.next += 1
            state.waiters[state.next] = { first.resolve(nil) }
            return state.next
        }
        guard let id else { return nil }
        Task { first.resolve(await operation()) }
        let result = await first.value
        _ = state.withLock { $0.waiters.removeValue(forKey: id) }
        return result
    }

    private func stalled(_ reason: String) {
        let waiters = state.withLock { state -> [@Sendable () -> Void] in
            state.reason = reason
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter() }
    }
}

/// A value delivered once, by the first of several producers.
final class FirstResult<T: Sendable>: Sendable {
    private let state = Locked<(value: T?, done: Bool, waiter: CheckedContinuation<T, Never>?)>((nil, false, nil))

    /// Delivers `value` unless a value was delivered already.
    func resolve(_ value: T) {
        let waiter = state.withLock { state -> CheckedContinuation<T, Never>? in
            guard !state.done else { return nil }
            state.done = true
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    /// The first value delivered.
    var value: T {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> (done: Bool, value: T?) in
                    if state.done { return (true, state.value) }
                    state.waiter = continuation
                    return (false, nil)
                }
                if ready.done, let value = ready.value { continuation.resume(returning: value) }
            }
        }
    }
}

/// Lua states given up on: their thread is stuck inside Lua where nothing can stop it safely.
///
/// What is kept, forever: the runtime (so that its engine's deinit never calls `lua_close` from
/// another thread while the stuck thread is still inside the state), the state's memory (at most
/// its memory limit plus the 1 MiB overdraft), the executor thread and its stack, and the thread's
/// CPU time (it keeps running whatever it is stuck in; on Linux at nice 19, so it only gets
/// what no one else wants). What is freed: nothing of the state; its
/// timers never fire again and its waits are never resumed. Everything the script wrote before
/// (outbox items, queued notifications, `store`) is already in its database. The count is bounded
/// by the files served: a quarantined script starts again only when its file changes. Use
/// `serve --isolate` to have the worker process killed instead, which frees everything.
enum AbandonedStates {
    private static let kept = Locked<[LuaRuntime]>([])

    /// Keeps `runtime` alive for the life of the process; returns how many are kept.
    @discardableResult
    static func keep(_ runtime: LuaRuntime) -> Int { kept.withLock { $0.append(runtime); return $0.count } }
}
