import Lua

/// `config`: read-only, secret-free view of the host configuration.
struct ConfigModule: LuaModule {
    let name = "config"
    let config: HostConfig
    var stub: String { String(decoding: PackageResources.config_lua, as: UTF8.self) }

    func push(into engine: LuaEngine, stack: LuaStack) throws {
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
        ], prefix: "config.", on: stack)
        stack.push(config.filePath ?? config.fileName)
        stack.setField("file", in: -2)
    }
}

extension LuaValue {
    /// A TOML value as Lua sees it (dates as their text).
    init(toml: TOMLValue) {
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
