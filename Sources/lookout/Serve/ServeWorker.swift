import ArgumentParser
import Foundation
import LookoutAutomation
import LookoutConfig
import LookoutModules
import Lua

/// `serve --isolate`: each script runs in a worker process, `lookout serve --worker FILE`, which
/// runs the one script once (no restarts: the parent restarts it with backoff), writes its health
/// to the file named by `LOOKOUT_WORKER_HEALTH` every second, and drains on SIGTERM.
enum ServeWorker {
    /// The launcher the parent uses: the same binary, the same limits.
    static func factory(
        script: ScriptOptions, drain: String, health: HealthRegistry, paths: LookoutPaths, base: ServeScriptFactory,
        memoryLimit: Int
    ) -> ServeScriptFactory {
        var arguments: [String] = ["serve", "--status-port", "0", "--drain", drain]
        if let memory = script.memoryLimit { arguments += ["--memory-limit", memory] }
        if let cpu = script.cpuLimit { arguments += ["--cpu-limit", cpu] }
        if let requests = script.requestsInFlight { arguments += ["--requests-in-flight", String(requests)] }
        if script.verbose { arguments.append("--verbose") }
        let directory = paths.stateDirectory + "/workers"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fixed = arguments
        var factory = base
        factory.worker = ServeWorkerLauncher(
            executable: executablePath(),
            arguments: { file in fixed + (ServeStatusAddress.port.map { ["--parent-status-port", String($0)] } ?? []) + ["--worker", file] },
            healthFile: { file in directory + "/" + (file as NSString).lastPathComponent + ".json" })
        factory.worker?.memoryCeiling = WorkerMemoryCeiling.ceiling(memoryLimit: memoryLimit)
        return factory
    }

    /// The running lookout binary.
    static func executablePath() -> String {
        #if os(Linux)
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        #endif
        return CommandLine.arguments[0]
    }

    /// Runs one script as a worker; exits 1 if it crashed, 3 if it was quarantined.
    static func run(
        file: String, factory: ServeScriptFactory, settings: ServeSettings, health: HealthRegistry,
        paths: LookoutPaths, log: @escaping ServeLog
    ) async throws {
        if let ceiling = ProcessInfo.processInfo.environment[WorkerMemoryCeiling.variable].flatMap(Int.init),
            !WorkerMemoryCeiling.applyLimit(ceiling: ceiling)
        {
            log("\((file as NSString).lastPathComponent): cannot set the worker's memory limit (RLIMIT_DATA)")
        }
        var settings = settings
        settings.restartCrashed = false
        let name = (file as NSString).lastPathComponent
        let healthFile = ProcessInfo.processInfo.environment[ServeWorkerLauncher.healthVariable]
        // A worker whose parent is gone (killed: it could not stop us) ends too, within a second,
        // rather than run its script unsupervised (and, in a cluster, outside any lease).
        let parent = getppid()
        let writer = Task {
            while !Task.isCancelled {
                if getppid() != parent {
                    log("\(name): the serve process that started this worker is gone; exiting")
                    exit(1)
                }
                if let healthFile { try? health.json(now: Date()).write(to: URL(fileURLWithPath: healthFile), options: .atomic) }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        let supervisor = ServeSupervisor(
            discovery: ScriptDiscovery(paths: [file]), factory: factory, settings: settings, health: health, log: log)
        let signals = SignalWatcher { _ in Task { await supervisor.stop() } }
        await supervisor.startOnce()
        await supervisor.waitForScripts()
        signals.cancel()
        writer.cancel()
        if let healthFile { try? health.json(now: Date()).write(to: URL(fileURLWithPath: healthFile), options: .atomic) }
        switch health.script(name)?.state {
        case .crashed: throw ExitCode(1)
        case .quarantined: throw ExitCode(ServeWorkerLauncher.quarantinedStatus)  // exiting frees the stuck state
        default: break
        }
    }
}
