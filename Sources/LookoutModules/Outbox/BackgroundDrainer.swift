import Foundation
import LookoutWire
import LookoutConfig

/// Sends a queue's due items in the background: drains, then sleeps until the earliest retry
/// (at most `longestSleep`), and stops when nothing is pending. `kick()` starts it again (after a
/// new item or a retry); a kick during a drain makes the drain look again before it stops.
/// Used by the Nightscout upload outboxes and the notification queue.
public final class BackgroundDrainer: Sendable {
    private let drain: @Sendable () async -> Void
    private let nextDue: @Sendable () async -> Date?
    private let longestSleep: TimeInterval
    private let state = Locked<(task: Task<Void, Never>?, kicked: Bool)>((nil, false))

    /// A drainer calling `drain` and sleeping until `nextDue` (nil: nothing pending).
    public init(longestSleep: TimeInterval = .infinity, drain: @escaping @Sendable () async -> Void,
         nextDue: @escaping @Sendable () async -> Date?) {
        self.drain = drain
        self.nextDue = nextDue
        self.longestSleep = longestSleep
    }

    /// Starts draining unless a drain is already running.
    public func kick() {
        state.withLock { s in
            s.kicked = true
            guard s.task == nil else { return }
            s.task = Task.detached { await self.run() }
        }
    }

    private func run() async {
        while !Task.isCancelled {
            state.withLock { $0.kicked = false }
            await drain()
            if let next = await nextDue() {
                try? await Task.sleep(for: .seconds(min(longestSleep, max(0.05, next.timeIntervalSinceNow))))
                continue
            }
            let stop = state.withLock { s -> Bool in
                if s.kicked { return false }
                s.task = nil
                return true
            }
            if stop { return }
        }
    }
}
