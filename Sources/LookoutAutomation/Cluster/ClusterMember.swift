import Foundation
import LookoutStore

/// This process's membership of a `serve --cluster`: heartbeats, the leases it holds, and the
/// plan that balances the work with the other live instances (``ClusterPlan``).
///
/// Every `settings.renewInterval` it renews its leases in one transaction (a lease missing from
/// the answer was lost: its handle is revoked and its script stopped), then gives up what it
/// holds beyond its share and takes free or expired leases up to it. When the database cannot
/// be reached, nothing is renewed and each holding ends at its local deadline
/// (``ClusterLeaseHandle``): the scripts stop before any other instance can take their work.
/// Changes are announced through `onChange` (the supervisor starts and stops scripts); a lease
/// given up is kept (renewed, its handle revoked so the script starts nothing new) until its
/// script has stopped, then released in the database (``workStopped(_:)``): whatever the old
/// holding still had in flight ends before the next holder starts.
public actor ClusterMember {
    /// The settings.
    public nonisolated let settings: ClusterSettings
    private let store: any ClusterLeaseStore
    private let log: ServeLog
    private let me: ClusterInstance
    private var holdings: [String: ClusterLeaseHandle] = [:]
    private var releasing: [String: (fence: Int64, retire: Bool)] = [:]
    private var work: [String] = []
    private var loop: Task<Void, Never>?
    private var onChange: (@Sendable () async -> Void)?
    private var leaving = false
    /// The last view of the cluster read, and the last failure to reach the database.
    public private(set) var lastView: ClusterView?
    /// Why the last heartbeat failed (nil after a good one).
    public private(set) var lastError: String?

    /// A member of `settings.name` keeping its leases in `store`.
    public init(settings: ClusterSettings, store: any ClusterLeaseStore, log: @escaping ServeLog) {
        self.settings = settings
        self.store = store
        self.log = log
        me = ClusterInstance(id: settings.instance, host: ProcessInfo.processInfo.hostName, pid: Int(getpid()), startedAt: Date())
    }

    /// Every piece of work the cluster has (the same on every instance that serves the same files).
    public func setWork(_ work: [String]) { self.work = Array(Set(work)).sorted() }

    /// The live holding of `work`, if this instance has one.
    public func holding(_ work: String) -> ClusterLeaseHandle? {
        guard let handle = holdings[work], !handle.ended else { return nil }
        return handle
    }

    /// Starts heartbeats; `onChange` is called (not awaited by the heartbeat) when holdings change.
    public func start(onChange: @escaping @Sendable () async -> Void) {
        self.onChange = onChange
        guard loop == nil else { return }
        let interval = settings.renewInterval
        loop = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                await self.tick()
                try? await Task.sleep(for: .milliseconds(Int(interval * 1000)))
            }
        }
    }

    /// One heartbeat: renew, then balance. Returns whether the holdings changed.
    @discardableResult
    public func tick() async -> Bool {
        guard !leaving else { return false }
        var changed = dropEnded()
        let sent = ContinuousClock.now
        let deadline = sent + .milliseconds(Int((settings.ttl - settings.margin) * 1000))
        do {
            // Leases being given up are renewed too until their script has stopped (its drain may
            // outlast the lease): the next holder starts only after the last request of this one.
            let held = holdings.mapValues { $0.fence.fence }.merging(releasing.mapValues(\.fence)) { mine, _ in mine }
            let renewal = try await store.clusterHeartbeat(cluster: settings.name, instance: me, held: held, ttl: settings.ttl)
            for (work, release) in releasing where renewal.renewed[work] != release.fence { releasing[work] = nil }
            for (work, handle) in holdings {
                if renewal.renewed[work] == handle.fence.fence {
                    handle.extend(to: deadline)
                } else {
                    handle.revoke()
                    holdings[work] = nil
                    changed = true
                    log("cluster \(settings.name): lost the lease of \(work) (fence \(handle.fence.fence)); stopping it")
                }
            }
            let view = try await store.clusterView(cluster: settings.name)
            lastView = view
            if lastError != nil { log("cluster \(settings.name): the database answers again") }
            lastError = nil
            let plan = ClusterPlan.make(instance: me.id, held: Set(holdings.keys), work: work, view: view,
                                        live: view.live.map(\.id))
            for work in plan.release {
                guard let handle = holdings.removeValue(forKey: work) else { continue }
                handle.revoke()
                releasing[work] = (handle.fence.fence, !self.work.contains(work))
                changed = true
            }
            for work in plan.acquire {
                let asked = ContinuousClock.now
                guard let fence = try await store.acquireLease(cluster: settings.name, work: work, instance: me.id, ttl: settings.ttl)
                else { continue }
                let fenceValue = LeaseFence(cluster: settings.name, work: work, instance: me.id, fence: fence)
                holdings[work] = ClusterLeaseHandle(fence: fenceValue,
                                                    deadline: asked + .milliseconds(Int((settings.ttl - settings.margin) * 1000)))
                changed = true
            }
        } catch {
            if lastError == nil {
                log("cluster \(settings.name): cannot reach the database (\(error)); scripts stop as their leases run out")
            }
            lastError = String(describing: error)
        }
        if changed, let onChange { Task { await onChange() } }
        return changed
    }

    /// Called once the script of `work` has stopped: a lease given up is released in the
    /// database now, so another instance can take it at once.
    public func workStopped(_ work: String) async {
        guard let release = releasing.removeValue(forKey: work) else { return }
        do {
            try await store.releaseLease(cluster: settings.name, work: work, instance: me.id, fence: release.fence,
                                         retire: release.retire)
        } catch {
            log("cluster \(settings.name): could not release \(work) (\(error)); it expires on its own")
        }
    }

    /// Releases the leases given up whose work is not running here (`running`: the supervisor's
    /// scripts): a piece taken and given up again before its script started has no script to
    /// wait for, and would otherwise be renewed and held from the others for good.
    public func releaseIdle(running: Set<String>) async {
        for work in releasing.keys.sorted() where !running.contains(work) { await workStopped(work) }
    }

    /// Leaves the cluster after the scripts stopped (SIGTERM): every lease is released at once.
    public func leave() async {
        leaving = true
        loop?.cancel()
        loop = nil
        for handle in holdings.values { handle.revoke() }
        holdings = [:]
        releasing = [:]
        do {
            try await store.leaveCluster(cluster: settings.name, instance: me.id)
        } catch {
            log("cluster \(settings.name): could not leave cleanly (\(error)); leases expire within \(Int(settings.ttl)) s")
        }
    }

    /// Forgets holdings whose local deadline passed (no renewal reached the database in time).
    private func dropEnded() -> Bool {
        let ended = holdings.filter { $0.value.ended }
        for (work, handle) in ended {
            holdings[work] = nil
            log("cluster \(settings.name): the lease of \(work) ran out (fence \(handle.fence.fence)); stopping it")
        }
        return !ended.isEmpty
    }
}
