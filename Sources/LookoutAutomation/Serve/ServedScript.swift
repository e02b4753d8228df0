import Foundation
import LookoutWire
import LookoutConfig
import LookoutModules
import LookoutStore
import Lua

/// One script under `serve`: runs it in its own Lua state, restarts it with backoff when it
/// crashes, and stops it (draining running tasks) on reload or shutdown.
///
/// A crash is an error in the main chunk (the script is stopped at once, even if it had started
/// timers) or a run that ended with errors. A file that cannot start (a syntax error, unreadable)
/// and a run that ends cleanly with nothing left to do (`finished`) are not restarted until the
/// file changes.
actor ServedScript {
    /// The path of the file.
    let file: String
    /// The name in health and logs (the file name).
    let name: String
    private let factory: ServeScriptFactory
    private let settings: ServeSettings
    private let health: HealthRegistry
    private let log: ServeLog
    private var loop: Task<Void, Never>?
    private var current: (runtime: LuaRuntime, generation: UInt64, watch: StallWatch)?
    private var process: Process?
    private var stopping = false
    private var restarts = 0
    /// The cluster lease it runs under (`serve --cluster`).
    private let lease: ClusterLeaseHandle?

    /// `name` is the file's name, or `file.lua@profile` for one binding of it (`[serve.bind]`).
    init(file: String, name: String? = nil, factory: ServeScriptFactory, settings: ServeSettings, health: HealthRegistry,
         lease: ClusterLeaseHandle? = nil, log: @escaping ServeLog) {
        self.file = file
        self.lease = lease
        self.name = name ?? (file as NSString).lastPathComponent
        self.factory = factory
        self.settings = settings
        self.health = health
        self.log = log
    }

    /// Starts supervising.
    func start() {
        guard loop == nil else { return }
        loop = Task { await self.supervise() }
    }

    /// Waits until supervision ends (the script finished, was stopped, or crashed without restart).
    func finished() async { await loop?.value }

    private enum RunResult {
        case finished, stopped
        case crashed(String)
        /// Stuck past its limits (see ``AbandonedStates``): stays stopped until the file changes.
        case quarantined(String)
        /// The file cannot run as it is (a syntax error, or it cannot be read): restarting it
        /// cannot help, so it waits until the file changes.
        case broken(String)
    }

    private func supervise() async {
        var failures = 0
        while !stopping {
            let started = ContinuousClock.now
            let result = await runOnce()
            if stopping { break }
            switch result {
            case .stopped:
                return
            case .finished:
                health.updateScript(name) { $0.state = .finished; $0.nextRestart = nil }
                log("\(name): finished (nothing left to run); it runs again when the file changes")
                return
            case .quarantined(let reason):
                log("\(name): quarantined until its file changes: \(reason)")
                return
            case .broken(let reason):
                health.updateScript(name) { entry in
                    entry.state = .crashed
                    entry.nextRestart = nil
                    entry.detail = "waiting for the file to change"
                }
                log("\(name): cannot run (\(reason)); waiting for the file to change")
                return
            case .crashed(let reason):
                let ranFor = ContinuousClock.now - started
                failures = ranFor >= .seconds(settings.stableAfter) ? 1 : failures + 1
                let delay = settings.backoff(failures: failures)
                let restartAt = Date().addingTimeInterval(delay)
                health.updateScript(name) { entry in
                    entry.state = .crashed
                    entry.nextRestart = restartAt
                    if entry.lastError == nil { entry.lastError = reason; entry.lastErrorAt = Date() }
                }
                guard settings.restartCrashed else {
                    log("\(name): crashed (\(reason))")
                    return
                }
                log("\(name): crashed (\(reason)); restarting in \(Quantities.formatDuration(delay))")
                do {
                    try await Task.sleep(for: .milliseconds(Int(delay * 1000)))
                } catch {
                    return  // stopped while waiting
                }
                if stopping { return }
                restarts += 1
                let count = restarts
                health.updateScript(name) { $0.restarts = count; $0.nextRestart = nil }
            }
        }
    }

    private func runOnce() async -> RunResult {
        if let launcher = factory.worker { return await runWorker(launcher) }
        let watch = RunWatch()
        var options = factory.options(file)
        options.timeLimit = 0  // a served script runs for as long as serve does
        options.lease = lease
        if options.name != name {
            // One binding of a file: its own name (store, alerts, health) and a prefix on its lines.
            let profile = name.split(separator: "@").last.map(String.init) ?? name
            let output = options.output, warnings = options.warnings
            options.name = name
            options.output = { output("(\(profile)) " + $0) }
            options.warnings = { warnings("(\(profile)) " + $0) }
        }
        let name = self.name
        let health = self.health
        let log = self.log
        // The tasks whose last run failed: LAST ERROR stays until each has run without error again.
        let failing = Locked<Set<String>>([])
        options.errors = { error in
            failing.withLock { _ = $0.insert(error.task) }
            health.updateScript(name) { entry in
                entry.errors += 1
                entry.lastError = error.message
                entry.lastErrorAt = Date()
                entry.traceback = error.traceback.isEmpty ? nil : error.traceback
            }
            log(error.description)
            if error.task.hasPrefix("main chunk") { watch.crash(reason: "error in the main chunk: \(error.message)") }
        }
        options.succeeded = { task in
            let settled = failing.withLock { set -> Bool in
                set.remove(task)
                return set.isEmpty
            }
            health.updateScript(name) { entry in
                entry.lastSuccess = Date()
                if settled { entry.clearLastError() }
            }
        }
        health.updateScript(name) { entry in
            entry.state = .starting
            entry.errors = 0
            entry.jobs = []
            entry.nextRun = nil
        }
        let runtime = LuaRuntime(options: options, modules: factory.modules(file))
        do {
            try await runtime.start()
        } catch {
            await runtime.close()
            return .crashed("cannot start Lua: \(error)")
        }
        let generation = await runtime.withEngine { $0.generation }
        let stall = StallWatch(runtime: runtime, grace: options.stallGrace)
        defer { stall.cancel() }
        current = (runtime, generation, stall)
        watch.attach(runtime)
        health.updateScript(name) { $0.state = .running }
        let file = self.file
        let sleeping = Self.watchSleep(runtime: runtime, generation: generation, stall: stall, health: health, name: name)
        let ran = await stall.run { await runtime.run(file: file) }
        sleeping.cancel()
        await sleeping.value  // never asks the runtime once it is closing
        health.updateScript(name) { $0.sleeping = nil }
        current = nil
        guard let outcome = ran, await stall.run({ await runtime.close() }) != nil else {
            return quarantine(runtime, reason: stall.reason ?? "stuck")
        }
        if stopping { return .stopped }
        if let message = outcome.message {
            // Never started: a syntax error or an unreadable file, which the same file repeats.
            health.updateScript(name) { $0.lastError = message; $0.lastErrorAt = Date(); $0.errors += 1 }
            return .broken(message)
        }
        if let reason = watch.reason { return .crashed(reason) }
        if outcome.exitCode != 0 {
            return .crashed(outcome.errors > 0 ? "ended after \(outcome.errors) error\(outcome.errors == 1 ? "" : "s")" : "exit status \(outcome.exitCode)")
        }
        return .finished
    }

    /// How often `serve` looks whether a script sleeps (for health and the web view).
    static let sleepCheckInterval: Duration = .milliseconds(500)

    /// Keeps the script's `sleeping` in health up to date until cancelled: asks the runtime every
    /// `sleepCheckInterval` (on its executor, so between two pieces of Lua work), and gives up
    /// once the state stalls.
    private static func watchSleep(runtime: LuaRuntime, generation: UInt64, stall: StallWatch, health: HealthRegistry,
                                   name: String) -> Task<Void, Never> {
        Task {
            var last: Bool?
            while !Task.isCancelled {
                guard let asleep = await stall.run({ await runtime.withLiveEngine(generation: generation) { $0.isSleeping } }) else { return }
                if let asleep, asleep != last {
                    last = asleep
                    health.updateScript(name) { $0.sleeping = asleep }
                }
                try? await Task.sleep(for: sleepCheckInterval)
            }
        }
    }

    /// How long a stop waits after the drain's interrupt for the script to end (then it is left
    /// to end on its own and the stop returns).
    static let interruptGraceMilliseconds = 750

    /// Stops the script: no new runs start, running tasks get `settings.drainDeadline`, then
    /// everything left is cancelled and the state closed; it returns within the drain and
    /// ``interruptGraceMilliseconds`` whatever the script does.
    func stop() async {
        stopping = true
        loop?.cancel()
        // Calls into the runtime only while `current` is set: runOnce clears it before closing
        // the runtime (whose executor thread then ends), and this actor runs one of them at a time.
        // A stuck state answers no call: each goes through the stall watch, which gives up on it.
        if let (runtime, generation, stall) = current {
            // Every wait below ends at its deadline, even when the script's executor is too busy
            // to answer (thousands of tasks): the drain ends on time whatever the script has in flight.
            let deadline = ContinuousClock.now + .milliseconds(Int(settings.drainDeadline * 1000))
            let drained = await ServeDeadline.first(at: deadline) { () async -> (idle: Bool, events: Bool) in
                _ = await stall.run { await runtime.withLiveEngine(generation: generation) { $0.stopTimers() } }
                while true {
                    let (done, events) = await stall.run {
                        await runtime.withLiveEngine(generation: generation) { ($0.isIdle, $0.onlyAwaitsEvents) } ?? (true, false)
                    } ?? (true, false)
                    if done || events || ContinuousClock.now >= deadline { return (done, events) }
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
            if let drained, !drained.idle, drained.events {
                // Only handlers waiting for their next message (boat:on): nothing to drain.
                log("\(name): stopped at once (its tasks were only waiting for events)")
                let grace = ContinuousClock.now + .milliseconds(ServedScript.interruptGraceMilliseconds)
                _ = await ServeDeadline.first(at: grace) { await runtime.cancelAll() }
            } else if drained?.idle != true {
                log("\(name): still busy after the \(Quantities.formatDuration(settings.drainDeadline)) drain; interrupting")
                runtime.interrupt()  // cancels every task and its requests in flight
            }
        }
        if let process, process.isRunning {
            let pid = process.processIdentifier
            kill(pid, SIGTERM)
            // The worker drains as this process does and ends within its drain and a moment.
            let deadline = ContinuousClock.now + .milliseconds(Int(settings.drainDeadline * 1000) + ServedScript.interruptGraceMilliseconds)
            while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
            if process.isRunning { kill(pid, SIGKILL) }
        }
        if let loop {
            let grace = ContinuousClock.now + .milliseconds(ServedScript.interruptGraceMilliseconds)
            if await ServeDeadline.first(at: grace, { await loop.value }) == nil {
                log("\(name): did not end within \(ServedScript.interruptGraceMilliseconds) ms of the interrupt; left to end on its own")
            }
        }
        health.updateScript(name) { $0.state = .stopped; $0.nextRun = nil; $0.nextRestart = nil }
    }
}

extension ServedScript {
    /// Gives up on a state that its limits could not stop: it is kept (never touched or freed
    /// again, see ``AbandonedStates``) and the script is reported quarantined.
    private func quarantine(_ runtime: LuaRuntime, reason: String) -> RunResult {
        runtime.interrupt()  // in case it ever gets back to Lua code
        runtime.executor.deprioritize()  // it keeps spinning: idle CPU time only
        let kept = AbandonedStates.keep(runtime)
        health.updateScript(name) { entry in
            entry.state = .quarantined
            entry.lastError = reason
            entry.lastErrorAt = Date()
            entry.errors += 1
            entry.nextRun = nil
            entry.nextRestart = nil
            entry.detail = "abandoned Lua states in this process: \(kept)"
        }
        return .quarantined(reason)
    }

    /// Runs the script in a worker process (`--isolate`) and waits for it to exit; its health is
    /// copied from the file it writes.
    private func runWorker(_ launcher: ServeWorkerLauncher) async -> RunResult {
        let healthFile = launcher.healthFile(file)
        try? FileManager.default.removeItem(atPath: healthFile)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: launcher.executable)
        child.arguments = launcher.arguments(file)
        var environment = ProcessInfo.processInfo.environment
        environment[ServeWorkerLauncher.healthVariable] = healthFile
        if let ceiling = launcher.memoryCeiling { environment[WorkerMemoryCeiling.variable] = String(ceiling) }
        child.environment = environment
        let (exits, continuation) = AsyncStream<Int32>.makeStream()
        child.terminationHandler = { process in
            continuation.yield(process.terminationStatus)
            continuation.finish()
        }
        do {
            try child.run()
        } catch {
            return .crashed("cannot start a worker process: \(error)")
        }
        process = child
        let name = self.name
        let health = self.health
        let pid = child.processIdentifier
        health.updateScript(name) { $0.state = .running; $0.detail = "worker pid \(pid)" }
        let memory = launcher.memoryCeiling.map { WorkerMemoryWatch(pid: pid, ceiling: $0) }
        defer { memory?.cancel() }
        let copier = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                ServedScript.copyWorkerHealth(from: healthFile, name: name, into: health)
            }
        }
        var iterator = exits.makeAsyncIterator()
        let status = await iterator.next() ?? -1
        copier.cancel()
        ServedScript.copyWorkerHealth(from: healthFile, name: name, into: health)
        process = nil
        if stopping { return .stopped }
        if status == 0 { return .finished }
        if child.terminationReason == .exit, status == ServeWorkerLauncher.quarantinedStatus {
            let reason = health.script(name)?.lastError ?? "stuck past its limits"
            health.updateScript(name) { $0.state = .quarantined; $0.nextRestart = nil; $0.nextRun = nil }
            return .quarantined(reason + " (worker process \(pid) ended)")
        }
        if let reason = memory?.reason {
            health.updateScript(name) { $0.lastError = reason; $0.lastErrorAt = Date(); $0.errors += 1 }
            return .crashed(reason)
        }
        let reason = child.terminationReason == .uncaughtSignal ? "worker killed by signal \(status)" : "worker exited with status \(status)"
        return .crashed(reason)
    }

    /// Copies what the worker reported about its script (errors, jobs, next run).
    static func copyWorkerHealth(from file: String, name: String, into health: HealthRegistry) {
        guard let data = FileManager.default.contents(atPath: file),
              let document = try? HealthDocument.decode(data)
        else { return }
        for entry in document.entries {
            if entry.kind == "script" {
                health.updateScript(name) { mine in
                    mine.errors = entry.errors
                    // The worker's error, or none once it succeeded after the one kept here (a crash's).
                    if entry.lastError != nil {
                        mine.lastError = entry.lastError
                        mine.lastErrorAt = entry.lastErrorAt
                        mine.traceback = entry.traceback ?? mine.traceback
                    } else if let ok = entry.lastSuccess, ok > (mine.lastErrorAt ?? .distantPast) {
                        mine.clearLastError()
                    }
                    mine.lastSuccess = entry.lastSuccess ?? mine.lastSuccess
                    mine.jobs = entry.jobs
                    mine.nextRun = entry.nextRun
                    mine.sleeping = entry.sleeping
                }
            } else {
                health.updateComponent(entry.name, script: name) { $0 = entry }
            }
        }
    }
}

/// Notices a crash reported from the Lua thread and stops the state.
private final class RunWatch: Sendable {
    private let state = Locked<(reason: String?, runtime: LuaRuntime?)>((nil, nil))

    var reason: String? { state.withLock { $0.reason } }

    func attach(_ runtime: LuaRuntime) {
        let crashed = state.withLock { state -> Bool in
            state.runtime = runtime
            return state.reason != nil
        }
        if crashed { Task { await runtime.cancelAll() } }
    }

    func crash(reason: String) {
        let runtime = state.withLock { state -> LuaRuntime? in
            if state.reason == nil { state.reason = reason }
            return state.runtime
        }
        if let runtime { Task { await runtime.cancelAll() } }
    }
}
