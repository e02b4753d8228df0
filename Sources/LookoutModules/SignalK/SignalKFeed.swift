import Foundation
import LookoutWire
import SignalKKit

/// The boat's side of its stream: one Swift task (the pump) reads the stream's `events()` and
/// hands each delta's changes to every open `deltas` loop's buffer. It also keeps the connection
/// state and the hello for `boat:state()` / `boat:hello()` without a hop to the stream actor.
///
/// Loops register and unregister synchronously (under a lock), so a loop sees every value that
/// arrives after `boat:deltas{…}` returned, and a loop that ends stops receiving at once.
final class SignalKFeed: Sendable {
    private struct State {
        var buffers: [ObjectIdentifier: SignalKDeltaBuffer] = [:]
        var targets: [SignalKDeltaBuffer] = []
        var finished = false
        var connection: SignalKConnectionState = .idle
        var hello: SignalKHello?
        var lastError: SignalKStreamError?
    }

    private let guarded = Locked(State())

    /// The stream's latest connection state (`.idle` until the first is set).
    public var state: SignalKConnectionState { guarded.withLock { $0.connection } }
    var hello: SignalKHello? { guarded.withLock { $0.hello } }
    /// Why the stream last closed a connection itself (a server that broke a bound), if it did.
    var lastError: SignalKStreamError? { guarded.withLock { $0.lastError } }

    func setError(_ e: SignalKStreamError) { guarded.withLock { $0.lastError = e } }

    func setState(_ s: SignalKConnectionState) {
        guarded.withLock {
            $0.connection = s
            if case .connected(let h) = s { $0.hello = h }
        }
    }

    func setHello(_ h: SignalKHello) { guarded.withLock { $0.hello = h } }

    /// Adds a loop's buffer; a feed that already ended finishes it at once.
    func add(_ buffer: SignalKDeltaBuffer) {
        let ended = guarded.withLock { state -> Bool in
            guard !state.finished else { return true }
            state.buffers[ObjectIdentifier(buffer)] = buffer
            state.targets = Array(state.buffers.values)
            return false
        }
        if ended { buffer.finish() }
    }

    func remove(_ buffer: SignalKDeltaBuffer) {
        guarded.withLock { state in
            guard state.buffers.removeValue(forKey: ObjectIdentifier(buffer)) != nil else { return }
            state.targets = Array(state.buffers.values)
        }
    }

    /// Number of open loops (tests, `tostring`).
    var loopCount: Int { guarded.withLock { $0.buffers.count } }

    /// Hands `changes` to every open loop (one lock and at most one wake-up per loop) and empties it.
    func dispatch(_ changes: inout [SignalKChange]) {
        guard !changes.isEmpty else { return }
        let targets = guarded.withLock { $0.targets }
        for buffer in targets { buffer.offer(changes) }
        changes.removeAll(keepingCapacity: true)
    }

    /// The stream ended (the boat was closed): every loop ends after its buffered values.
    func finishAll() {
        let all = guarded.withLock { state -> [SignalKDeltaBuffer] in
            state.finished = true
            state.connection = .closed
            defer { state.buffers = [:]; state.targets = [] }
            return Array(state.buffers.values)
        }
        for buffer in all { buffer.finish() }
    }
}

/// The bounded buffer of one `deltas` loop. When the loop is slower than the stream, the
/// **oldest** buffered values are dropped (and counted): a loop always sees the newest data.
final class SignalKDeltaBuffer: Sendable {
    /// The ring of buffered changes and the loop's waiter.
    private struct Ring {
        var changes: SignalKRing<SignalKChange>
        var finished = false
        var cancelled = false
        var waiter: CheckedContinuation<Void, Never>?

        /// Takes the waiter out, to be resumed outside the lock.
        mutating func takeWaiter() -> CheckedContinuation<Void, Never>? {
            defer { waiter = nil }
            return waiter
        }
    }

    private let ring: Locked<Ring>
    let capacity: Int
    /// Path patterns (empty: every path).
    let paths: [SignalKPattern]
    /// Context pattern (nil: every context); `vessels.self`/`self` match the own vessel.
    let context: SignalKPattern?
    private let matchesSelfAlias: Bool
    /// Whether meta changes (a path's metadata from the server) are taken too (`meta = true`).
    let meta: Bool

    init(capacity: Int, paths: [SignalKPattern], context: SignalKPattern?, meta: Bool = false) {
        self.capacity = max(1, capacity)
        self.paths = paths
        self.context = context
        self.meta = meta
        matchesSelfAlias = context.map { $0.pattern == SignalKContext.selfAlias || $0.pattern == "self" } ?? false
        ring = Locked(Ring(changes: SignalKRing(capacity: self.capacity)))
    }

    private func accepts(_ c: SignalKChange) -> Bool {
        if c.isMeta, !meta { return false }
        if let context, !(matchesSelfAlias && c.isSelf), !context.matches(c.context) { return false }
        if paths.isEmpty { return true }
        for p in paths where p.matches(c.path) { return true }
        return false
    }

    /// Appends the matching changes, dropping the oldest when full; wakes a waiting loop.
    func offer(_ changes: [SignalKChange]) {
        let matching = changes.filter(accepts)
        guard !matching.isEmpty else { return }
        let wake = ring.withLock { ring -> CheckedContinuation<Void, Never>? in
            guard !ring.finished else { return nil }
            ring.changes.append(contentsOf: matching)
            return ring.takeWaiter()
        }
        wake?.resume()
    }

    /// Takes up to `limit` values, oldest first; `finished` when no more will come; `dropped` is
    /// the total dropped so far.
    func take(_ limit: Int) -> (items: [SignalKChange], finished: Bool, dropped: Int) {
        ring.withLock { ring in
            let items = ring.changes.removeFirst(upTo: limit)
            return (items, ring.finished && ring.changes.isEmpty, ring.changes.dropped)
        }
    }

    /// Ends the loop: no more values are accepted; a waiting loop wakes up.
    func finish() {
        let wake = ring.withLock { ring -> CheckedContinuation<Void, Never>? in
            ring.finished = true
            return ring.takeWaiter()
        }
        wake?.resume()
    }

    /// Returns when values are buffered, the buffer finished, or the waiting task was cancelled.
    func waitForData() async {
        ring.withLock { $0.cancelled = false }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = ring.withLock { ring -> Bool in
                    if !ring.changes.isEmpty || ring.finished || ring.cancelled { return true }
                    ring.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let wake = ring.withLock { ring -> CheckedContinuation<Void, Never>? in
                ring.cancelled = true
                return ring.takeWaiter()
            }
            wake?.resume()
        }
    }
}

/// The first outcome of `signalk.connect`: a hello, or a failure before any hello.
final class SignalKConnectGate: Sendable {
    enum Outcome: Sendable {
        case connected(SignalKHello)
        case failed(code: String, message: String)
    }

    private let state = Locked((outcome: Outcome?.none, waiter: CheckedContinuation<Outcome, Never>?.none))

    func resolve(_ o: Outcome) {
        let wake = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = o
            defer { state.waiter = nil }
            return state.waiter
        }
        wake?.resume(returning: o)
    }

    func wait() async -> Outcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let ready = state.withLock { state -> Outcome? in
                    if let outcome = state.outcome { return outcome }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            resolve(.failed(code: "cancelled", message: "cancelled"))
        }
    }
}
