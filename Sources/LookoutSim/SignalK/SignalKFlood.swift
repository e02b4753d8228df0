import Foundation

extension SignalKSimulator {
    /// Benchmarks: queues `count` pre-encoded text frames (cycling through `frames`) on every open
    /// stream socket, in order, without touching the model, the cache or subscriptions (a socket
    /// opened with `subscribe=none` gets them too). The queues are unbounded, so this returns as
    /// soon as everything is queued; each socket's writer then sends as fast as the peer reads.
    /// - Returns: the number of sockets the frames were queued on.
    @discardableResult
    public func flood(frames: [String], count: Int) async -> Int {
        await hub.flood(frames, count: count)
    }
}

extension SignalKHub {
    func flood(_ frames: [String], count: Int) -> Int {
        let targets = conns.keys.sorted().compactMap { conns[$0]?.conn }
        guard !frames.isEmpty, count > 0 else { return targets.count }
        for conn in targets {
            var i = 0
            for _ in 0..<count {
                conn.send(frames[i])
                i += 1
                if i == frames.count { i = 0 }
            }
        }
        return targets.count
    }
}
