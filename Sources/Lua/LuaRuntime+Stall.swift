import Foundation
import LuaShim

/// The last resort of the limits: noticing a state that its limits cannot stop.
///
/// The count hook and the guarded library functions stop script code cooperatively at the CPU
/// and wall-clock limits. Some code is out of their reach: Lua runs `__gc` finalizers with hooks
/// off (scripts cannot install them, but a script could still reach a finalizer through a table
/// the host shares), and a C function we did not guard never looks at the clock. Such a state
/// cannot be stopped from another thread safely: a watchdog can only notice it and let the
/// caller give up on it (`lookout run` exits 1; `lookout serve` abandons the state and
/// quarantines the script).
extension LuaRuntime {
    /// Why the state's thread is stuck past its limits, or nil while it is not (or waits for work).
    ///
    /// Stuck means, with `grace` seconds of tolerance: script code running past its CPU deadline;
    /// a job running past the run's wall-clock limit; or, with a CPU limit, the thread busy for
    /// longer than that limit while no task runs (a finalizer, closing the state).
    public nonisolated func stall(grace: Double, now: Int64 = shim_now_ns()) -> String? {
        guard let since = executor.busy else { return nil }
        let graceNs = Int64(grace * 1e9)
        let cpu = options.cpuLimit
        let unreachable = "it is stuck where the limits cannot reach (a __gc finalizer or a C function)"
        let within = "did not stop within \(Quantities.formatDuration(grace))"
        guard let snapshot = budget.snapshot() else {
            // Closing: the state is being freed, which runs the finalizers of what is left.
            guard cpu > 0, now - since > Int64(cpu * 1e9) + graceNs else { return nil }
            return "closing the Lua state took longer than the CPU limit (\(Quantities.formatDuration(cpu)), "
                + "see --cpu-limit) and \(within): \(unreachable)"
        }
        if snapshot.slice_deadline != 0 {
            guard now > snapshot.slice_deadline + graceNs else { return nil }
            return "CPU limit exceeded (\(Quantities.formatDuration(cpu)), see --cpu-limit) and the script \(within): \(unreachable)"
        }
        if snapshot.run_deadline != 0, now > snapshot.run_deadline + graceNs, now - since > graceNs {
            return "time limit exceeded (see --time-limit) and the script \(within): \(unreachable)"
        }
        guard cpu > 0, now - max(since, snapshot.mark) > Int64(cpu * 1e9) + graceNs else { return nil }
        return "the Lua state ran longer than the CPU limit (\(Quantities.formatDuration(cpu)), see --cpu-limit) "
            + "outside any task and \(within): \(unreachable)"
    }

    /// Polls `stall(grace:)` until it reports (returns the reason) or the calling task is
    /// cancelled (returns nil).
    public nonisolated func waitForStall(grace: Double) async -> String? {
        while !Task.isCancelled {
            if let reason = stall(grace: grace) { return reason }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }
}

extension BudgetBox {
    /// The watchdog's view of the budget; nil once the state is closing.
    func snapshot() -> ShimBudgetSnapshot? {
        lockedPointer { $0.map { shim_budget_snapshot($0) } }
    }
}
