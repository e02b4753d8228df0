import Foundation

/// The leases of `serve --cluster`: which instance runs which piece of work (a script, or one
/// binding of a script to a profile), with heartbeats and fencing numbers, kept in the state
/// database so that every instance sharing it sees one truth.
///
/// Times are the database's clock where it has one (PostgreSQL's `clock_timestamp()`), so
/// instances whose clocks disagree still agree on who holds what; `lookout doctor` reports how
/// far an instance's clock is from it. A lease is held until `expiresAt`; every acquisition
/// (a lease that was free or had expired) takes the next fencing number of that piece of work,
/// so a holder whose lease moved on can be told apart from the new one by its number.
public protocol ClusterLeaseStore: Sendable {
    /// Records that `instance` is alive (its heartbeat) and renews, for `ttl` seconds, the
    /// leases it still holds among `held` (work → fencing number). Returns the database's time
    /// and the leases renewed: one missing from the answer was lost (it expired and another
    /// instance took it) and must stop at once.
    func clusterHeartbeat(cluster: String, instance: ClusterInstance, held: [String: Int64], ttl: TimeInterval)
        async throws(StateStoreError) -> ClusterRenewal
    /// Takes the lease of `work` for `ttl` seconds when it is free or has expired; returns its
    /// new fencing number, or nil when another instance holds it.
    func acquireLease(cluster: String, work: String, instance: String, ttl: TimeInterval)
        async throws(StateStoreError) -> Int64?
    /// Gives the lease back (it becomes free at once) if `instance` still holds it with `fence`;
    /// with `retire` (the work is gone from the folder) its row is removed. Fences are only
    /// ever compared together with their holder, so a number used again after a retirement
    /// never matches an old holding.
    func releaseLease(cluster: String, work: String, instance: String, fence: Int64, retire: Bool) async throws(StateStoreError)
    /// Whether `fence` is still the live lease of its work (held by its instance, not expired).
    func leaseIsHeld(_ fence: LeaseFence) async throws(StateStoreError) -> Bool
    /// The instances and leases of `cluster`, with the database's time.
    func clusterView(cluster: String) async throws(StateStoreError) -> ClusterView
    /// Removes `instance` from `cluster`, giving back every lease it holds (a clean stop).
    func leaveCluster(cluster: String, instance: String) async throws(StateStoreError)
}

/// One running `serve --cluster` instance, as it reports itself.
public struct ClusterInstance: Sendable, Equatable, Codable {
    /// Unique per process: `host:pid:random`, or `--instance NAME`.
    public var id: String
    /// The machine's host name.
    public var host: String
    /// The process id.
    public var pid: Int
    /// When this instance joined.
    public var startedAt: Date
    /// Its last heartbeat, on the database's clock (in views; ignored when reporting).
    public var heartbeatAt: Date
    /// How far its own clock was ahead of the database's at the heartbeat (seconds; negative
    /// when behind).
    public var clockSkew: Double
    /// The lease time it uses (seconds): it counts as live while its last heartbeat is younger.
    public var ttl: Double

    /// An instance.
    public init(id: String, host: String, pid: Int, startedAt: Date, heartbeatAt: Date = Date(), clockSkew: Double = 0,
                ttl: Double = 15) {
        self.id = id
        self.host = host
        self.pid = pid
        self.startedAt = startedAt
        self.heartbeatAt = heartbeatAt
        self.clockSkew = clockSkew
        self.ttl = ttl
    }

    /// Whether its last heartbeat is younger than its lease time at `now` (the database's time).
    public func isLive(at now: Date) -> Bool { now.timeIntervalSince(heartbeatAt) < ttl }
}

/// One piece of work's lease.
public struct ClusterLease: Sendable, Equatable, Codable {
    /// The work: a script's file name, or `script@profile` for a binding.
    public var work: String
    /// The instance holding it; nil when free.
    public var holder: String?
    /// Its fencing number: grows by one at every acquisition.
    public var fence: Int64
    /// Until when the holder holds it, unless renewed.
    public var expiresAt: Date
    /// When the holder took it.
    public var acquiredAt: Date

    /// A lease.
    public init(work: String, holder: String?, fence: Int64, expiresAt: Date, acquiredAt: Date) {
        self.work = work
        self.holder = holder
        self.fence = fence
        self.expiresAt = expiresAt
        self.acquiredAt = acquiredAt
    }
}

/// The identity of one holding of a lease, for checks in the database (``ClusterLeaseStore/leaseIsHeld(_:)``).
public struct LeaseFence: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The cluster's name.
    public var cluster: String
    /// The work.
    public var work: String
    /// The holding instance.
    public var instance: String
    /// The fencing number of this holding.
    public var fence: Int64

    /// A holding.
    public init(cluster: String, work: String, instance: String, fence: Int64) {
        self.cluster = cluster
        self.work = work
        self.instance = instance
        self.fence = fence
    }

    public var description: String { "\(work) (cluster \(cluster), fence \(fence))" }
}

/// What a heartbeat answered.
public struct ClusterRenewal: Sendable, Equatable {
    /// The database's time at the heartbeat.
    public var now: Date
    /// The leases renewed (work → fencing number).
    public var renewed: [String: Int64]

    /// An answer.
    public init(now: Date, renewed: [String: Int64]) {
        self.now = now
        self.renewed = renewed
    }
}

/// A cluster as the database sees it.
public struct ClusterView: Sendable, Equatable, Codable {
    /// The cluster's name.
    public var cluster: String
    /// The database's time when read.
    public var now: Date
    /// Every instance that reported (live or not: see ``live``), by id.
    public var instances: [ClusterInstance]
    /// Every lease, by work.
    public var leases: [ClusterLease]

    /// A view.
    public init(cluster: String, now: Date, instances: [ClusterInstance], leases: [ClusterLease]) {
        self.cluster = cluster
        self.now = now
        self.instances = instances
        self.leases = leases
    }

    /// The instances whose last heartbeat is younger than their lease time.
    public var live: [ClusterInstance] { instances.filter { $0.isLive(at: now) } }

    /// The leases held now (not free, not expired), by work.
    public var held: [String: ClusterLease] {
        Dictionary(leases.filter { $0.holder != nil && $0.expiresAt > now }.map { ($0.work, $0) }, uniquingKeysWith: { a, _ in a })
    }
}

/// A lease that is no longer this instance's: what a fenced write throws (`err.code == "lease"`).
public struct LeaseLost: Error, CustomStringConvertible, Sendable {
    /// The holding that ended.
    public var fence: LeaseFence

    /// The error for `fence`.
    public init(fence: LeaseFence) { self.fence = fence }

    public var description: String {
        "this instance no longer holds the lease of \(fence): another instance runs it now"
    }
}
