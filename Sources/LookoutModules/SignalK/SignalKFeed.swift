import Foundation
import SignalKKit

/// The boat's side of its stream: one Swift task (the pump) reads the stream's `events()` and
/// hands each delta's changes to every open `deltas` loop's buffer. It also keeps the connection
/// state and the hello for `boat:state()` / `boat:hello()` without a hop to the stream actor.
///
/// Loops register and unregister synchronously (under a lock), so a loop sees every value that
/// arrives after `boat:deltas{…}` returned, and a loop that ends stops receiving at once.
final class SignalKFeed: @unchecked Sendable {
    // @unchecked Sendable: every mutable field is only touched while holding `lock`.
    private let lock = NSLock()
    private var buffers: [ObjectIdentifier: SignalKDeltaBuffer] = [:]
    private var targets: [SignalKDeltaBuffer] = []
    private var finished = false
    private var _state: SignalKConnectionState = .idle
    private var _hello: SignalKHello?

    public var state: SignalKConnectionState { lock.withLock { _state } }
    var hello: SignalKHello? { lock.withLock { _hello } }

    func setState(_ s: SignalKConnectionState) {
        lock.withLock {
            _state = s
            if case .connected(let h) = s { _hello = h }
        }
    }

    func setHello(_ h: SignalKHello) { lock.withLock { _hello = h } }

    /// Adds a loop's buffer; a feed that already ended finishes it at once.
    func add(_ buffer: SignalKDeltaBuffer) {
        let ended = lock.withLock { () -> Bool in
            guard !finished else { return true }
            buffers[ObjectIdentifier(buffer)] = buffer
            targets = Array(buffers.values)
            return false
        }
        if ended { buffer.finish() }
    }

    func remove(_ buffer: SignalKDeltaBuffer) {
        lock.withLock {
            guard buffers.removeValue(forKey: ObjectIdentifier(buffer)) != nil else { return }
            targets = Array(buffers.values)
        }
    }

    /// Number of open loops (tests, `tostring`).
    var loopCount: Int { lock.withLock { buffers.count } }

    func dispatch(_ changes: [SignalKChange]) {
        let targets = lock.withLock { self.targets }
        for buffer in targets { buffer.offer(changes) }
    }

    /// The stream ended (the boat was closed): every loop ends after its buffered values.
    func finishAll() {
        let all = lock.withLock { () -> [SignalKDeltaBuffer] in
            finished = true
            _state = .closed
            let all = Array(buffers.values)
            buffers = [:]
            targets = []
            return all
        }
        for buffer in all { buffer.finish() }
    }
}

/// The bounded buffer of one `deltas` loop. When the loop is slower than the stream, the
/// **oldest** buffered values are dropped (and counted): a loop always sees the newest data.
final class SignalKDeltaBuffer: @unchecked Sendable {
    // @unchecked Sendable: every mutable field is only touched while holding `lock`.
    private let lock = NSLock()
    let capacity: Int
    /// Path patterns (empty: every path).
    let paths: [SignalKPattern]
    /// Context pattern (nil: every context); `vessels.self`/`self` match the own vessel.
    let context: SignalKPattern?
    private let matchesSelfAlias: Bool
    private var ring: [SignalKChange?]
    private var head = 0
    private var count = 0
    private var dropped = 0
    private var finished = false
    private var cancelled = false
    private var waiter: CheckedContinuation<Void, Never>?

    init(capacity: Int, paths: [SignalKPattern], context: SignalKPattern?) {
        self.capacity = max(1, capacity)
        self.paths = paths
        self.context = context
        matchesSelfAlias = context.map { $0.pattern == SignalKContext.selfAlias || $0.pattern == "self" } ?? false
        ring = Array(repeating: nil, count: self.capacity)
    }

    private func accepts(_ c: SignalKChange) -> Bool {
        if c.isMeta { return false }
        if let context, !(matchesSelfAlias && c.isSelf), !context.matches(c.context) { return false }
        if paths.isEmpty { return true }
        for p in paths where p.matches(c.path) { return true }
        return false
    }

    /// Appends the matching changes, dropping the oldest when full; wakes a waiting loop.
    func offer(_ changes: [SignalKChange]) {
        let matching = changes.filter(accepts)
        guard !matching.isEmpty else { return }
        let wake = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard !finished else { return nil }
            for c in matching {
                if count == capacity {
                    ring[head] = nil
                    head = head + 1 == capacity ? 0 : head + 1
                    count -= 1
                    dropped += 1
                }
                var tail = head + count
                if tail >= capacity { tail -= capacity }
                ring[tail] = c
                count += 1
            }
            defer { waiter = nil }
            return waiter
        }
        wake?.resume()
    }

    /// Takes up to `limit` values, oldest first; `finished` when no more will come; `dropped` is
    /// the total dropped so far.
    func take(_ limit: Int) -> (items: [SignalKChange], finished: Bool, dropped: Int) {
        lock.withLock {
            let n = min(limit, count)
            var items: [SignalKChange] = []
            items.reserveCapacity(n)
            for _ in 0..<n {
                items.append(ring[head]!)
                ring[head] = nil
                head = head + 1 == capacity ? 0 : head + 1
            }
            count -= n
            return (items, finished && count == 0, dropped)
        }
    }

    /// Ends the loop: no more values are accepted; a waiting loop wakes up.
    func finish() {
        let wake = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            finished = true
            defer { waiter = nil }
            return waiter
        }
        wake?.resume()
    }

    /// Returns when values are buffered, the buffer finished, or the waiting task was cancelled.
    func waitForData() async {
        lock.withLock { cancelled = false }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = lock.withLock { () -> Bool in
                    if count > 0 || finished || cancelled { return true }
                    waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let wake = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                cancelled = true
                defer { waiter = nil }
                return waiter
            }
            wake?.resume()
        }
    }
}

/// The first outcome of `signalk.connect`: a hello, or a failure before any hello.
final class SignalKConnectGate: @unchecked Sendable {
    // @unchecked Sendable: every mutable field is only touched while holding `lock`.
    enum Outcome: Sendable {
        case connected(SignalKHello)
        case failed(code: String, message: String)
    }

    private let lock = NSLock()
    private var outcome: Outcome?
    private var waiter: CheckedContinuation<Outcome, Never>?

    func resolve(_ o: Outcome) {
        let wake = lock.withLock { () -> CheckedContinuation<Outcome, Never>? in
            guard outcome == nil else { return nil }
            outcome = o
            defer { waiter = nil }
            return waiter
        }
        wake?.resume(returning: o)
    }

    func wait() async -> Outcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let ready = lock.withLock { () -> Outcome? in
                    if let outcome { return outcome }
                    waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            resolve(.failed(code: "cancelled", message: "cancelled"))
        }
    }
}
