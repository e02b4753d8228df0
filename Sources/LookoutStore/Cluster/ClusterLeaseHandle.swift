import Foundation
import LookoutWire
import Lua

/// This instance's holding of one lease, as the script running under it sees it
/// (``LuaOptions/lease``): held until a local deadline that every renewal moves on, revoked at
/// once when the instance gives the work up or learns it lost it.
///
/// The deadline is kept on this machine's `ContinuousClock` (which goes on while the process
/// is stopped or the machine sleeps): a renewal sent at local time `t` makes the database keep
/// the lease until at least `t + ttl` on its own clock, so the local deadline `t + ttl − margin`
/// passes before any other instance can take the lease, whatever happened to this process
/// meanwhile (a pause, a partition). A paused instance that wakes up finds its deadline passed
/// and its scripts' calls refused before it hears from the database.
public final class ClusterLeaseHandle: LuaLease {
    /// The holding, for checks in the database.
    public let fence: LeaseFence
    private let deadline: Locked<ContinuousClock.Instant?>

    /// A holding valid until `deadline`.
    public init(fence: LeaseFence, deadline: ContinuousClock.Instant) {
        self.fence = fence
        self.deadline = Locked(deadline)
    }

    /// Moves the deadline on after a renewal (never back; not after a revocation).
    public func extend(to instant: ContinuousClock.Instant) {
        deadline.withLock { current in
            if let held = current, instant > held { current = instant }
        }
    }

    /// Ends the holding here: from now on every call of the script is refused.
    public func revoke() { deadline.withLock { $0 = nil } }

    /// Whether the holding has ended (revoked, or its deadline passed).
    public var ended: Bool { refusal() != nil }

    public func refusal() -> String? {
        guard let until = deadline.withLock({ $0 }) else {
            return "this instance gave up \(fence.work) (cluster \(fence.cluster)): another instance runs it"
        }
        guard ContinuousClock.now < until else {
            return "this instance's lease of \(fence.work) (cluster \(fence.cluster), fence \(fence.fence)) ran out "
                + "before it could be renewed; another instance may run it now"
        }
        return nil
    }
}
