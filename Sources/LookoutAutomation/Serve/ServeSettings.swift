import Foundation
import Lua

/// How `serve` makes the Lua state of one script: its options (limits, output) and modules.
/// The CLI builds these from the config and flags; tests give their own.
public struct ServeScriptFactory: Sendable {
    /// Options for a script file (serve clears the wall-clock limit and installs its error sink).
    public var options: @Sendable (_ file: String) -> LuaOptions
    /// Modules for a script file.
    public var modules: @Sendable (_ file: String) -> [any LuaModule]
    /// With `--isolate`: how to start a worker process for a script instead of a Lua state here.
    public var worker: ServeWorkerLauncher?

    /// Creates a factory.
    public init(
        options: @escaping @Sendable (_ file: String) -> LuaOptions,
        modules: @escaping @Sendable (_ file: String) -> [any LuaModule],
        worker: ServeWorkerLauncher? = nil
    ) {
        self.options = options
        self.modules = modules
        self.worker = worker
    }
}

/// How `serve --isolate` starts the worker process of one script: the executable, its arguments,
/// and the file where the worker writes its health (`HealthDocument`) for the parent to read.
public struct ServeWorkerLauncher: Sendable {
    /// The executable (the lookout binary).
    public var executable: String
    /// Arguments for a script file.
    public var arguments: @Sendable (_ file: String) -> [String]
    /// The environment variable that tells a worker where to write its health.
    public static let healthVariable = "LOOKOUT_WORKER_HEALTH"
    /// The exit status of a worker whose script got stuck past its limits (quarantined; the
    /// reason is the `last_error` of its health file).
    public static let quarantinedStatus: Int32 = 3
    /// Where the worker of a script writes its health.
    public var healthFile: @Sendable (_ file: String) -> String
    /// The most resident memory a worker may use (``WorkerMemoryCeiling``); nil = none.
    public var memoryCeiling: Int?

    /// Creates a launcher.
    public init(executable: String, arguments: @escaping @Sendable (_ file: String) -> [String],
                healthFile: @escaping @Sendable (_ file: String) -> String) {
        self.executable = executable
        self.arguments = arguments
        self.healthFile = healthFile
    }
}

/// Timings of `serve`.
public struct ServeSettings: Sendable {
    /// First wait before restarting a crashed script (doubles per crash in a row).
    public var backoffStart: Double = 1
    /// Longest wait before a restart.
    public var backoffLimit: Double = 300
    /// A run that lasted this long before crashing starts the backoff afresh.
    public var stableAfter: Double = 60
    /// How often files are checked for changes.
    public var pollInterval: Double = 1.5
    /// How long running tasks may go on after SIGTERM or a reload before they are cancelled.
    public var drainDeadline: Double = 10
    /// Restart crashed scripts (a worker process leaves that to its parent).
    public var restartCrashed = true

    /// The defaults: 1 s doubling to 5 min, files checked every 1.5 s, 10 s to drain.
    public init() {}

    /// The wait before restart number `failures` (1, 2, …) in a row.
    public func backoff(failures: Int) -> Double {
        min(backoffLimit, backoffStart * pow(2, Double(max(0, failures - 1))))
    }
}

/// A line `serve` reports (start, crash, restart, reload); errors come with their traceback.
public typealias ServeLog = @Sendable (String) -> Void
