import ArgumentParser
import LookoutConfig
import Lua

/// Limits and modes shared by `run` and `repl`.
struct ScriptOptions: ParsableArguments {
    @Option(name: .customLong("memory-limit"), help: "Memory a script may use, e.g. 64MB (default from config, else 64MB; 0 = none).")
    var memoryLimit: String?

    @Option(name: .customLong("cpu-limit"), help: "CPU time a task may run without waiting, e.g. 5s (default 5s; 0 = none).")
    var cpuLimit: String?

    @Option(name: .customLong("time-limit"), help: "Wall-clock limit for the whole run, e.g. 10m (default none).")
    var timeLimit: String?

    @Option(name: .customLong("requests-in-flight"), help: "Requests to servers a script runs at once (default from config, else 32; more wait).")
    var requestsInFlight: Int?

    @Flag(help: "Give the script the whole Lua standard library: io, os, debug, finalizers, every collectgarbage option (only for your own scripts).")
    var trusted = false

    @Flag(name: .shortAndLong, help: "Show debug logs and full tracebacks.")
    var verbose = false

    /// The limits: flags override the config's `[limits]`.
    func limits(from config: HostConfig) throws -> HostConfig.Limits {
        var limits = config.limits
        if let memoryLimit {
            guard let bytes = Quantities.parseSize(memoryLimit) else {
                throw ValidationError("--memory-limit: expected a size such as 64MB, got \(memoryLimit)")
            }
            if let problem = HostConfig.Limits.memoryLimitProblem(bytes) {
                throw ValidationError("--memory-limit: \(problem)")
            }
            limits.memoryBytes = bytes
        }
        if let cpuLimit {
            guard let seconds = Quantities.parseDuration(cpuLimit) else {
                throw ValidationError("--cpu-limit: expected a duration such as 5s, got \(cpuLimit)")
            }
            limits.cpuSeconds = seconds
        }
        if let timeLimit {
            guard let seconds = Quantities.parseDuration(timeLimit) else {
                throw ValidationError("--time-limit: expected a duration such as 10m, got \(timeLimit)")
            }
            limits.timeSeconds = seconds > 0 ? seconds : nil
        }
        if let requestsInFlight {
            let range = HostConfig.Limits.requestsInFlightRange
            guard range.contains(requestsInFlight) else {
                throw ValidationError("--requests-in-flight: expected \(range.lowerBound) to \(range.upperBound), got \(requestsInFlight)")
            }
            limits.requestsInFlight = requestsInFlight
        }
        return limits
    }
}
