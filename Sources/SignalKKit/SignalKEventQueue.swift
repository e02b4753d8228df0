import LookoutWire

/// One consumer's events from a ``SignalKStream``, handed over in batches: the stream appends
/// under a lock and wakes the consumer only when it waits, and the consumer takes everything
/// buffered at once. So a busy consumer costs one hand-off per batch, not per delta.
///
/// Bounded like ``SignalKStream/events()``: at most ``SignalKStreamConfiguration/bufferSize``
/// events; when full the **oldest** are dropped and counted (in ``droppedCount`` and the stream's
/// ``SignalKStream/droppedEventCount``). Iterate with `for await batch in queue`; the iteration
/// ends after the stream closed and the queue is empty, or when the iterating task is cancelled.
public final class SignalKEventQueue: AsyncSequence, Sendable {
    /// A batch: the events buffered when the consumer asked, oldest first.
    public typealias Element = [SignalKStreamEvent]

    private struct State {
        var ring: SignalKRing<SignalKStreamEvent>
        var finished = false
        var cancelled = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state: Locked<State>

    init(capacity: Int) { state = Locked(State(ring: SignalKRing(capacity: capacity))) }

    /// Events dropped so far because the consumer was too slow.
    public var droppedCount: Int { state.withLock { $0.ring.dropped } }
    /// Whether the consumer stopped (its task was cancelled or ``cancel()`` was called).
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Appends `events` in order (the oldest buffered are dropped when full) and wakes a waiting
    /// consumer. Returns how many events were dropped by this call.
    @discardableResult
    func append(_ events: [SignalKStreamEvent]) -> Int {
        let (dropped, wake) = state.withLock { s -> (Int, CheckedContinuation<Void, Never>?) in
            guard !s.finished, !s.cancelled else { return (0, nil) }
            let dropped = s.ring.append(contentsOf: events)
            defer { s.waiter = nil }
            return (dropped, s.waiter)
        }
        wake?.resume()
        return dropped
    }

    /// No more events: the consumer gets what is buffered, then the end.
    func finish() {
        let wake = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter
        }
        wake?.resume()
    }

    /// Stops consuming: buffered events are discarded and the stream forgets this queue.
    public func cancel() {
        let wake = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.cancelled = true
            _ = s.ring.removeFirst(upTo: s.ring.count)
            defer { s.waiter = nil }
            return s.waiter
        }
        wake?.resume()
    }

    /// Every buffered event (oldest first), waiting while there is none; `nil` at the end.
    public func next() async -> [SignalKStreamEvent]? {
        while true {
            let taken = state.withLock { s -> [SignalKStreamEvent]?? in
                if s.cancelled { return .some(nil) }
                if !s.ring.isEmpty { return s.ring.removeFirst(upTo: s.ring.count) }
                if s.finished { return .some(nil) }
                return nil
            }
            if let taken { return taken }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { s -> Bool in
                        if !s.ring.isEmpty || s.finished || s.cancelled { return true }
                        s.waiter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                cancel()
            }
        }
    }

    /// Iterates the batches.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: SignalKEventQueue
        /// The next batch, or `nil` at the end.
        public mutating func next() async -> [SignalKStreamEvent]? { await queue.next() }
    }

    /// An iterator over the batches (all iterators share the one queue).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: self) }
}
