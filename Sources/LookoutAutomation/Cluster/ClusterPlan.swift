import Foundation
import LookoutStore

/// What one instance does with the work at a heartbeat: which leases to give up and which to
/// try to take, so that the live instances converge on an even share (every instance holds at
/// most ⌈work ÷ live instances⌉ pieces) and each piece prefers the same instance every time
/// (rendezvous hashing), so work does not wander between instances that stay.
public struct ClusterPlan: Sendable, Equatable {
    /// Leases to give up (the work is gone, or this instance holds more than its share).
    public var release: [String]
    /// Free or expired leases to try to take, best first.
    public var acquire: [String]

    /// The plan for `instance`, holding `held`, given the cluster `view`, the live instances
    /// and every piece of `work`.
    public static func make(instance: String, held: Set<String>, work: [String], view: ClusterView,
                            live: [String]) -> ClusterPlan {
        let alive = Set(live).union([instance]).sorted()
        let wanted = Set(work)
        let share = work.isEmpty ? 0 : (work.count + alive.count - 1) / alive.count
        var release = held.subtracting(wanted).sorted()
        var keep = held.intersection(wanted)
        if keep.count > share {
            // Give up first what another live instance prefers, then the least preferred.
            let ordered = keep.sorted { rank($0, instance, alive) > rank($1, instance, alive) }
            let extra = ordered.prefix(keep.count - share)
            release += extra
            keep.subtract(extra)
        }
        let taken = view.held
        let free = work.filter { taken[$0] == nil && !keep.contains($0) }
            .sorted { (rank($0, instance, alive), $0) < (rank($1, instance, alive), $1) }
        return ClusterPlan(release: release, acquire: Array(free.prefix(max(0, share - keep.count))))
    }

    /// Where `instance` stands among `alive` in `work`'s preference order (0: most preferred).
    static func rank(_ work: String, _ instance: String, _ alive: [String]) -> Int {
        let mine = weight(work, instance)
        return alive.filter { $0 != instance && weight(work, $0) > mine }.count
    }

    /// A stable pseudo-random weight of (work, instance): FNV-1a, the same on every machine.
    static func weight(_ work: String, _ instance: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in work.utf8 + [0] + instance.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }
}
