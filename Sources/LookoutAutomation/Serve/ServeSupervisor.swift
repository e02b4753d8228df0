import Foundation
import LookoutModules
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
    private var scripts: [String: (script: ServedScript, stamp: ScriptStamp)] = [:]
    private var watcher: Task<Void, Never>?
    private var stopping = false

    /// Creates a supervisor; `start()` runs the scripts.
    public init(discovery: ScriptDiscovery, factory: ServeScriptFactory, settings: ServeSettings = ServeSettings(),
                health: HealthRegistry, log: @escaping ServeLog) {
        self.discovery = discovery
        self.factory = factory
        self.settings = settings
        self.health = health
        self.log = log
    }

    /// The files being served, sorted.
    public var files: [String] { scripts.keys.sorted() }

    /// Starts every script found and the file watcher.
    public func start() async {
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
    public func rescan() async {
        guard !stopping else { return }
        let found = discovery.scan()
        for (file, entry) in scripts where found[file] == nil {
            log("\(entry.script.name): file removed; stopping it")
            scripts[file] = nil
            await entry.script.stop()
            health.removeScript(entry.script.name)
        }
        for (file, stamp) in found.sorted(by: { $0.key < $1.key }) {
            if let entry = scripts[file] {
                guard entry.stamp != stamp else { continue }
                log("\(entry.script.name): changed; reloading")
                scripts[file] = nil
                await entry.script.stop()
            } else {
                log("\((file as NSString).lastPathComponent): starting")
            }
            guard !stopping else { return }
            let script = ServedScript(file: file, factory: factory, settings: settings, health: health, log: log)
            scripts[file] = (script, stamp)
            await script.start()
        }
    }

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
    }
}
