import Logging
import Lua

/// `log`: levelled messages through swift-log, prefixed with the script's name.
public struct LogModule: LuaModule {
    public let name = "log"
    public let isGlobal = true
    let logger: Logger
    public var stub: String { String(decoding: PackageResources.log_lua, as: UTF8.self) }

    public func push(into engine: LuaEngine, stack: LuaStack) throws {
        var logger = self.logger
        logger[metadataKey: "script"] = .string(engine.options.name)
        let levels: [(String, Logger.Level)] = [
            ("trace", .trace), ("debug", .debug), ("info", .info), ("notice", .notice), ("warn", .warning),
            ("error", .error),
        ]
        var functions: [String: LuaBinding] = [:]
        for (name, level) in levels {
            functions[name] = { [logger] call in
                guard logger.logLevel <= level else { return .nothing }
                // Shares the script's output budget with `print`: lines cut, rate limited.
                let (pass, summary) = call.engine.outputLimiter.admit()
                guard pass else { return .nothing }
                if let summary { logger.log(level: .warning, "\(summary)") }
                logger.log(level: level, "\(call.engine.outputLimiter.cut(call.joinedText()))")
                return .nothing
            }
        }
        functions["level"] = { [logger] call in
            call.stack.push(logger.logLevel.rawValue)
            return .values(1)
        }
        engine.pushLibrary(functions, prefix: "log.", on: stack)
    }

    /// Makes a value from its parts.
    public init(logger: Logger) {
        self.logger = logger
    }
}

extension LuaCall {
    /// The arguments as `print` shows them (`tostring` of each), joined by spaces.
    func joinedText(separator: String = " ") -> String {
        (1...max(count, 1)).prefix(count).map { stack.text(of: index($0)) }.joined(separator: separator)
    }
}
