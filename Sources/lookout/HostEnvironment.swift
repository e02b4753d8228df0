import Foundation
import Logging
import LookoutAutomation
import LookoutConfig
import LookoutModules
import Lua

/// A configuration or setup problem: reported with exit status 2.
struct HostSetupError: Error, CustomStringConvertible {
    let description: String
}

/// Paths, configuration and logging for one invocation of `lookout`.
struct HostEnvironment {
    let paths: LookoutPaths
    let config: HostConfig

    /// Reads the configuration (a missing file means defaults).
    static func load() throws -> HostEnvironment {
        let paths = LookoutPaths.resolve()
        do {
            let config = try HostConfig.load(paths: paths)
            try ServiceProfileSchema.validate(config)
            return HostEnvironment(paths: paths, config: config)
        } catch {
            throw HostSetupError(description: error.description)
        }
    }

    /// Prints a warning on standard error for each secret file other users can read (once, at
    /// the start of `run` and `serve`).
    func warnAboutSecretFiles() {
        for warning in config.secretFileWarnings() { FileHandleOutput.standardError.write("lookout: warning: \(warning)\n") }
    }

    /// Sends swift-log output to standard error at the configured level (debug with --verbose,
    /// the command's or `lookout -v`'s).
    func bootstrapLogging(verbose: Bool, tap: (@Sendable (_ script: String, _ line: String) -> Void)? = nil) -> Logger {
        let level = verbose || GlobalOptions.verbose ? .debug : Logger.Level(rawValue: config.logLevel.rawValue) ?? .info
        LoggingSystem.bootstrap { label in LookoutLogHandler(label: label, level: level, tap: tap) }
        var logger = Logger(label: "lookout")
        logger.logLevel = level
        return logger
    }

    /// Lua options from the config's limits and the command-line flags.
    func luaOptions(
        name: String, script: ScriptOptions, arguments: [String], scriptDirectory: String?,
        output: @escaping @Sendable (String) -> Void
    ) throws -> LuaOptions {
        let limits = try script.limits(from: config)
        var options = LuaOptions()
        options.name = name
        options.suggest = { ConfigWording.suggestion(for: $0, among: $1) }  // "did you mean" for a mistyped method
        options.memoryLimit = limits.memoryBytes
        options.cpuLimit = limits.cpuSeconds
        options.timeLimit = limits.timeSeconds ?? 0
        options.requestsInFlight = limits.requestsInFlight
        options.outputLineLimit = config.limits.logLineBytes
        options.outputRate = config.limits.logRate
        options.outputBurst = config.limits.logBurst
        options.trusted = script.trusted
        options.verbose = script.verbose || GlobalOptions.verbose
        options.arguments = arguments
        options.scriptDirectory = scriptDirectory
        options.output = output
        return options
    }

    /// Every module a script gets.
    /// - Parameter confirmation: asks at the terminal before live remote commands (the REPL).
    func modules(logger: Logger, confirmation: RemoteConfirmation? = nil) -> [any LuaModule] {
        HostModules.all(config: config, paths: paths, logger: logger, confirmation: confirmation)
    }
}
