import Foundation
import LookoutConfig
import LookoutModules
import LookoutStore
import Lua

/// `lookout serve`: runs every script of some files and folders, each in its own Lua state, for
/// as long as it lives. Crashed scripts restart with backoff; an error in one never stops the
/// others; files are polled for changes and a changed script is stopped (drained) and started
/// afresh; new files start and removed ones stop. `stop()` drains everything (SIGTERM).
///
/// ```swift
/// let supervisor = ServeSupervisor(discovery: ScriptDiscovery(paths: ["Scripts"]), factory: factory,
///                                  health: health, log: { print($0) })
/// await supervisor.start()
/// …
/// await supervisor.stop()
/// ```
public actor ServeSupervisor {
    private let discovery: ScriptDiscovery
    private let factory: ServeScriptFactory
    private let settings: ServeSettings
    /// Where scripts and components report.
    public nonisolated let health: HealthRegistry
    private let log: ServeLog
    private var scripts: [String: (script: ServedScript, stamp: ScriptStamp, lease: ClusterLeaseHandle?)] = [:]
    private var watcher: Task<Void, Never>?
    private var stopping = false
    private var scanning = false
    private var scanAgain = false
    /// With `serve --cluster`: runs only the scripts whose lease this instance holds.
    public nonisolated let cluster: ClusterMember?
    /// The profiles a script file is bound to (`[serve.bind]`); none: it runs once.
    private let bindings: @Sendable (_ file: String) -> [ScriptBinding]
    /// The settings of a bound profile, as a hash (a change restarts its work).
    private let profileSettings: @Sendable (ScriptBinding) -> Int

    /// Creates a supervisor; `start()` runs the scripts (with `cluster`, those it holds leases of;
    /// a file with `bindings` once per profile, restarted when `profileSettings` changes).
    public init(discovery: ScriptDiscovery, factory: ServeScriptFactory, settings: ServeSettings = ServeSettings(),
                health: HealthRegistry, cluster: ClusterMember? = nil,
                bindings: @escaping @Sendable (_ file: String) -> [ScriptBinding] = { _ in [] },
                profileSettings: @escaping @Sendable (ScriptBinding) -> Int = { _ in 0 }, log: @escaping ServeLog) {
        self.discovery = discovery
        self.factory = factory
        self.settings = settings
        self.health = health
        self.cluster = cluster
        self.bindings = bindings
        self.profileSettings = profileSettings
        self.log = log
    }

    /// The files being served, sorted.
    public var files: [String] { scripts.keys.sorted() }

    /// Starts every script found and the file watcher.
    public func start() async {
        if let cluster {
            await cluster.setWork(Array(works(discovery.scan()).keys))
            await cluster.start { [weak self] in await self?.rescan() }
            await cluster.tick()
        }
        await rescan()
        let interval = settings.pollInterval
        watcher = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(Int(interval * 1000)))
                guard let self, !Task.isCancelled else { return }
                await self.rescan()
            }
        }
    }

    /// Starts every script found, without watching files (a worker process).
    public func startOnce() async { await rescan() }

    /// Waits until every script's supervision has ended (finished, crashed without restart, or stopped).
    public func waitForScripts() async {
        for entry in scripts.values { await entry.script.finished() }
    }

    /// Compares the files with what runs: starts new ones, reloads changed ones, stops removed ones.
    /// In a cluster, only what this instance holds leases of runs: a script whose lease ended
    /// (lost, or given up to balance the work) is stopped, and one whose lease was taken starts.
    public func rescan() async {
        // One scan at a time (the file watcher and the cluster both ask): a request during a
        // scan makes it run once more.
        guard !scanning else { scanAgain = true; return }
        scanning = true
        defer { scanning = false }
        repeat {
            scanAgain = false
            await scanOnce()
        } while scanAgain && !stopping
    }

    private func scanOnce() async {
        guard !stopping else { return }
        let onDisk = works(discovery.scan())
        var found = onDisk
        var leases: [String: ClusterLeaseHandle] = [:]
        if let cluster {
            await cluster.setWork(Array(found.keys))
            for work in found.keys {
                if let lease = await cluster.holding(work) { leases[work] = lease } else { found[work] = nil }
            }
        }
        // Scripts to stop drain side by side (each within the drain deadline), not one after another.
        let leaving = scripts.filter { found[$0.key] == nil }
        for (work, entry) in leaving {
            log(onDisk[work] == nil
                ? "\(work): \(cluster == nil ? "file removed or unbound" : "gone from the folder"); stopping it"
                : "\(work): its lease moved on; stopping it here")
            scripts[work] = nil
        }
        let health = self.health, cluster = self.cluster
        await withTaskGroup(of: Void.self) { group in
            for (work, entry) in leaving {
                group.addTask {
                    await entry.script.stop()
                    health.removeScript(work)
                    await cluster?.workStopped(work)
                }
            }
        }
        for (work, unit) in found.sorted(by: { $0.key < $1.key }) {
            let lease = leases[work]
            if let entry = scripts[work] {
                guard entry.stamp != unit.stamp || entry.lease !== lease else { continue }
                let why = entry.stamp.settings != unit.stamp.settings ? "its profile changed; restarting"
                    : entry.stamp != unit.stamp ? "changed; reloading" : "lease taken again under a new fence; restarting"
                log("\(work): " + why)
                scripts[work] = nil
                await entry.script.stop()
            } else {
                log("\(work): starting" + (lease.map { " (lease fence \($0.fence.fence))" } ?? ""))
            }
            guard !stopping else { return }
            let script = ServedScript(file: unit.file, name: work, factory: factory, settings: settings, health: health,
                                      lease: lease, log: log)
            scripts[work] = (script, unit.stamp, lease)
            await script.start()
        }
        await cluster?.releaseIdle(running: Set(scripts.keys))
    }

    /// The pieces of work of the files found: a file runs once, or once per profile it is bound
    /// to (`[serve.bind]`: `low-alert.lua@child1`), keyed by work name.
    private func works(_ files: [String: ScriptStamp]) -> [String: (file: String, stamp: ScriptStamp)] {
        var result: [String: (file: String, stamp: ScriptStamp)] = [:]
        for (file, stamp) in files {
            let bound = bindings(file)
            if bound.isEmpty {
                result[Self.workName(file)] = (file, stamp)
            } else {
                for binding in bound {
                    var bound = stamp
                    bound.settings = profileSettings(binding)
                    result[Self.workName(file) + "@" + binding.profile] = (file, bound)
                }
            }
        }
        return result
    }

    /// The cluster's name for a script's work: its file name (the same on every instance that
    /// serves the same folder).
    public static func workName(_ file: String) -> String { (file as NSString).lastPathComponent }

    /// Stops watching and drains every script: no new runs start, running tasks get the drain
    /// deadline, then everything is closed. Outbox items not yet sent stay queued for next time.
    public func stop() async {
        stopping = true
        watcher?.cancel()
        watcher = nil
        let all = scripts.values.map(\.script)
        scripts = [:]
        await withTaskGroup(of: Void.self) { group in
            for script in all { group.addTask { await script.stop() } }
        }
        await cluster?.leave()
    }
}
