import Foundation
import LookoutStore

/// `lookout status --cluster NAME`: the cluster as its database sees it, for people.
enum ClusterTable {
    /// The instances (live or not, heartbeat age = lag, clock skew, leases held) and every
    /// piece of work (where it runs, its fence, when its lease ends).
    static func render(_ view: ClusterView) -> String {
        let now = view.now
        let held = view.held
        let live = view.live.map(\.id)
        var text = "cluster \(view.cluster): \(live.count) live instance\(live.count == 1 ? "" : "s"), "
            + "\(held.count) of \(view.leases.count) pieces of work running\n\n"
        let instances = view.instances.map { instance -> [String] in
            let count = held.values.filter { $0.holder == instance.id }.count
            return [
                instance.id, instance.isLive(at: now) ? "live" : "gone", "\(instance.host) pid \(instance.pid)",
                String(format: "%.1fs", now.timeIntervalSince(instance.heartbeatAt)),
                String(format: "%+.2fs", instance.clockSkew), String(count),
            ]
        }
        text += TextTable.render(["INSTANCE", "STATE", "WHERE", "LAG", "CLOCK", "LEASES"], instances) + "\n\n"
        let leases = view.leases.map { lease -> [String] in
            let running = held[lease.work] != nil
            return [
                lease.work, running ? (lease.holder ?? "-") : "(waiting)", String(lease.fence),
                running ? StatusTable.relative(lease.expiresAt, now) : "-",
            ]
        }
        text += TextTable.render(["WORK", "RUNS ON", "FENCE", "LEASE ENDS"], leases) + "\n"
        return text
    }
}
