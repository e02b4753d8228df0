import LookoutConfig
import Lua

/// `config`: read-only, secret-free view of the host configuration.
public struct ConfigModule: LuaModule {
    public let name = "config"
    let config: HostConfig
    public var stub: String { String(decoding: PackageResources.config_lua, as: UTF8.self) }

    public func push(into engine: LuaEngine, stack: LuaStack) throws {
        let config = self.config
        engine.pushLibrary([
            "get": { call in
                let path = try call.string(1)
                call.stack.push(config.publicValue(path: path).map(LuaValue.init(toml:)) ?? .nil)
                return .values(1)
            },
            "profiles": { call in
                let service = try call.string(1)
                guard HostConfig.knownServices.contains(service) else {
                    throw call.argumentError(1, "unknown service '\(service)'; known: \(HostConfig.knownServices.sorted().joined(separator: ", "))")
                }
                call.stack.push(.array(config.profiles(service: service).map(LuaValue.text)))
                return .values(1)
            },
            "settings": { call in
                let defaults = try call.options(1, name: "defaults")
                return call.returning(.object(try Self.settings(defaults, config: config, script: call.engine.options.name, call: call)))
            },
        ], prefix: "config.", on: stack)
        stack.push(config.filePath ?? config.fileName)
        stack.setField("file", in: -2)
        if let binding = Self.binding(of: engine.options.name, config: config).binding {
            stack.push(LuaValue.object(["service": .text(binding.service), "profile": .text(binding.profile)]))
            stack.setField("binding", in: -2)
        }
    }

    /// Makes a value from its parts.
    public init(config: HostConfig) {
        self.config = config
    }
}

extension ConfigModule {
    /// `defaults` overlaid with `[scripts."NAME".settings]`: every configured key must be one of
    /// the defaults' keys and of the same kind (number, string, boolean, list or table).
    /// A script bound to a profile (`[serve.bind]`, its name `script.lua@profile`) gets that
    /// profile as its `site` or `boat` setting, whatever the config says.
    static func settings(_ defaults: [String: LuaValue], config: HostConfig, script name: String, call: LuaCall) throws(LuaRaise)
        -> [String: LuaValue]
    {
        let (script, binding) = binding(of: name, config: config)
        var merged = try configured(defaults, config: config, script: script)
        if let binding, merged[binding.setting] != nil { merged[binding.setting] = .text(binding.profile) }
        return merged
    }

    /// The script's file name and its binding, from its name under `serve` (`low-alert.lua@child1`).
    static func binding(of name: String, config: HostConfig) -> (script: String, binding: ScriptBinding?) {
        guard let at = name.lastIndex(of: "@") else { return (name, nil) }
        let script = String(name[..<at]), profile = String(name[name.index(after: at)...])
        return (script, config.serveBindings(file: script).first { $0.profile == profile })
    }

    private static func configured(_ defaults: [String: LuaValue], config: HostConfig, script: String) throws(LuaRaise)
        -> [String: LuaValue]
    {
        guard let entry = config.scriptEntry(file: script), let table = entry.value.tableValue?["settings"]?.tableValue else {
            return defaults
        }
        var merged = defaults
        let base = "scripts.\(ConfigWording.quotedKey(entry.key)).settings"
        for item in table.entries {
            let value = LuaValue(toml: item.value)
            let at = "\(config.fileName): \(base).\(item.key)"
            guard let fallback = defaults[item.key] else {
                throw LuaRaise("\(at): unknown setting (this script knows: \(defaults.keys.sorted().joined(separator: ", ")))")
            }
            guard kind(of: value) == kind(of: fallback) else {
                throw LuaRaise("\(at): expected a \(kind(of: fallback)), got a \(kind(of: value))")
            }
            merged[item.key] = value
        }
        return merged
    }

    private static func kind(of value: LuaValue) -> String {
        switch value {
        case .int, .double: return "number"
        case .string: return "string"
        case .bool: return "boolean"
        case .array: return "list"
        case .object: return "table"
        default: return value.typeName
        }
    }
}

extension LuaValue {
    /// A TOML value as Lua sees it (dates as their text).
    public init(toml: TOMLValue) {
        switch toml {
        case .string(let s): self = .text(s)
        case .integer(let i): self = .int(i)
        case .float(let d): self = .double(d)
        case .boolean(let b): self = .bool(b)
        case .datetime(let s): self = .text(s)
        case .array(let items): self = .array(items.map(LuaValue.init(toml:)))
        case .table(let table):
            self = .object(Dictionary(uniqueKeysWithValues: table.entries.map { ($0.key, LuaValue(toml: $0.value)) }))
        }
    }
}
