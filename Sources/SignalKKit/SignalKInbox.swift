import LookoutWire

/// Frames parsed off the stream's actor, handed to it in batches: the socket's reader parses each
/// frame on its own task and appends it here; the actor takes everything pending at once. So
/// parsing runs beside the actor's work, and the actor is entered once per batch instead of once
/// per frame. Bounded: the reader waits while `limit` frames, or `byteLimit` bytes of frames, are
/// pending (the socket then stops being read, which is TCP's back-pressure; nothing is dropped here).
final class SignalKInbox: Sendable {
    /// A parsed frame, or why it could not be parsed.
    typealias Item = Result<SignalKServerMessage, any Error>

    private struct State {
        var items: [Item] = []
        var bytes = 0
        var closed = false
        var reader: CheckedContinuation<Void, Never>?
        var taker: CheckedContinuation<Void, Never>?
    }

    private let state = Locked(State())
    let limit: Int
    let byteLimit: Int

    init(limit: Int, byteLimit: Int = 4 << 20) {
        self.limit = max(1, limit)
        self.byteLimit = max(1, byteLimit)
    }

    /// Frames waiting for the actor.
    var pendingCount: Int { state.withLock { $0.items.count } }

    /// Adds a frame of `size` bytes; then waits while `limit` frames or `byteLimit` bytes are
    /// pending. `false` once the inbox is closed.
    func put(_ item: Item, size: Int = 0) async -> Bool {
        let (accepted, wake, full) = state.withLock { s -> (Bool, CheckedContinuation<Void, Never>?, Bool) in
            guard !s.closed else { return (false, nil, false) }
            s.items.append(item)
            s.bytes += size
            defer { s.taker = nil }
            return (true, s.taker, s.items.count >= limit || s.bytes >= byteLimit)
        }
        wake?.resume()
        guard accepted else { return false }
        if full {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { s -> Bool in
                    if (s.items.count < limit && s.bytes < byteLimit) || s.closed { return true }
                    s.reader = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
        return true
    }

    /// Every pending frame in order, waiting while there is none; `nil` once closed and empty (or
    /// when the taking task is cancelled, which closes the inbox).
    func take() async -> [Item]? {
        while true {
            let (items, wake, ended) = state.withLock { s -> ([Item]?, CheckedContinuation<Void, Never>?, Bool) in
                if !s.items.isEmpty {
                    let items = s.items
                    s.items = []
                    s.bytes = 0
                    defer { s.reader = nil }
                    return (items, s.reader, false)
                }
                return (nil, nil, s.closed)
            }
            if let items {
                wake?.resume()
                return items
            }
            if ended || Task.isCancelled { return nil }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { s -> Bool in
                        if !s.items.isEmpty || s.closed { return true }
                        s.taker = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                close()
            }
        }
    }

    /// No more frames are accepted; a waiting reader or taker wakes up (the taker still gets what
    /// is pending).
    func close() {
        let wake = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.closed = true
            defer { s.reader = nil; s.taker = nil }
            return [s.reader, s.taker].compactMap { $0 }
        }
        for w in wake { w.resume() }
    }
}
