import Foundation
import LookoutConfig
import LookoutStore
import Lua

/// `store`: a persistent key/value store per script (`engine.options.name`), in the shared
/// state database (`StateStore`, table `kv`).
///
/// Values are JSON encoded by the C codec, so they read back exactly as `json.decode(json.encode(v))`
/// would give them. Every call waits on a Swift task (the database is never used on the Lua
/// thread) and looks synchronous to scripts. `store.update` is Lua code over private
/// primitives, so its function may itself wait; it holds a per-key lock shared by every runtime
/// of the process and writes by compare-and-swap, which also guards against other processes.
public struct StoreModule: LuaModule {
    public let name = "store"
    public var stub: String { String(decoding: PackageResources.store_lua, as: UTF8.self) }

    /// Opens the database, on first use and off the Lua thread.
    let open: @Sendable () throws -> any StateBackend
    /// Names the database in lock keys (its path).
    let databaseID: String
    /// What each script may keep (`[limits] store`); nil: no quota.
    let quota: StoreQuota?

    /// A module over an open store (tests, or a host that opened it already).
    public init(store: any StateBackend, quota: StoreQuota? = HostConfig.Limits.defaults.storeQuota) {
        open = { store }
        databaseID = store.identity
        self.quota = quota
    }

    /// A module over the process's store at `paths.databaseFile`, opened when a script first
    /// uses it (an error opening it is the `err` of that call).
    public init(paths: LookoutPaths, quota: StoreQuota? = HostConfig.Limits.defaults.storeQuota) {
        open = { try StateBackends.shared(paths: paths) }
        databaseID = paths.databaseFile
        self.quota = quota
    }

    /// Longest key, in bytes.
    static let maximumKeyLength = 1024

    public func push(into engine: LuaEngine, stack: LuaStack) throws {
        let session = StoreSession(open: open, databaseID: databaseID, script: engine.options.name, quota: quota)
        engine.pushLibrary([
            "get": { call in try session.get(call) },
            "set": { call in try session.set(call) },
            "delete": { call in try session.delete(call) },
            "keys": { call in try session.keys(call) },
            "all": { call in try session.all(call) },
        ], prefix: "store.", on: stack)
        try StoreUpdate.install(session: session, engine: engine, stack: stack)
    }
}

/// The bindings of one state's `store` module: the script name and the database.
struct StoreSession: Sendable {
    let open: @Sendable () throws -> any StateBackend
    let databaseID: String
    let script: String
    /// What the script may keep; a write over it is `nil, err` with `err.code == "quota"`.
    let quota: StoreQuota?

    /// Runs a database operation off the Lua thread; failures become the error scripts see.
    func run<T: Sendable>(_ body: @escaping @Sendable (any StateBackend) async throws -> T) -> @Sendable () async -> Result<T, LuaErrorInfo> {
        let open = self.open
        return {
            do {
                return .success(try await body(try open()))
            } catch {
                return .failure(LuaErrorInfo(error))
            }
        }
    }

    /// Argument `n` as a key: a non-empty string of valid UTF-8 without NUL, at most 1024 bytes.
    static func key(_ call: LuaCall, _ n: Int = 1) throws(LuaRaise) -> String {
        let bytes = try call.bytes(n)
        guard !bytes.isEmpty, bytes.count <= StoreModule.maximumKeyLength else {
            throw call.argumentError(n, "key must be 1 to \(StoreModule.maximumKeyLength) bytes long")
        }
        guard !bytes.contains(0), let key = String(validating: bytes, as: UTF8.self) else {
            throw call.argumentError(n, "key must be valid UTF-8 text without NUL bytes")
        }
        return key
    }

    /// The JSON text of argument `n` (nil when nil: delete), raising with the path of what
    /// cannot be encoded.
    static func encoded(_ call: LuaCall, _ n: Int) throws(LuaRaise) -> [UInt8]? {
        guard !call.isNil(n) else { return nil }
        do {
            return try LuaJSONCodec.encode(call.stack, at: call.index(n))
        } catch {
            throw call.argumentError(n, "value is not JSON-encodable: \(error.message)")
        }
    }

    /// Pushes the value stored as `json` (decoded on the main thread: the task is suspended).
    /// Returns the error, pushing nothing, when the stored text is not JSON.
    static func pushDecoded(_ json: [UInt8], key: String, on stack: LuaStack, engine: LuaEngine) -> LuaErrorInfo? {
        do {
            try LuaJSONCodec.decode(json, onto: stack, worker: LuaStack(engine.L))
            return nil
        } catch {
            return LuaErrorInfo(
                code: "store", message: "the stored value of \(String(reflecting: key)) is not valid JSON (\(error.message))")
        }
    }

    /// Pushes `nil, err`.
    static func fail(_ error: LuaErrorInfo, on stack: LuaStack, engine: LuaEngine) -> Int32 {
        stack.pushNil()
        engine.push(error: error, on: stack)
        return 2
    }

    // MARK: Bindings

    /// `store.get(key [, default])` → value, default or nil; `nil, err` if the database fails.
    func get(_ call: LuaCall) throws -> LuaReturn {
        let key = try StoreSession.key(call)
        let engine = call.engine
        let fallback = call.isNil(2) ? nil : engine.ref(at: call.index(2), in: call.L)
        let script = self.script
        return try call.wait("store.get \(String(reflecting: key))", run { try await $0.value(script: script, key: key) }) {
            stack, result in
            defer { if let fallback { engine.release(fallback) } }
            switch result {
            case .success(let json?):
                if let problem = StoreSession.pushDecoded(json, key: key, on: stack, engine: engine) {
                    return StoreSession.fail(problem, on: stack, engine: engine)
                }
            case .success(nil):
                if let fallback { engine.push(fallback, on: stack) } else { stack.pushNil() }
            case .failure(let error):
                return StoreSession.fail(error, on: stack, engine: engine)
            }
            return 1
        }
    }

    /// `store.set(key, value)` → true; nil deletes.
    func set(_ call: LuaCall) throws -> LuaReturn {
        let key = try StoreSession.key(call)
        let json = try StoreSession.encoded(call, 2)
        return try write(call, key: key, json: json, what: "store.set")
    }

    /// `store.delete(key)` → true.
    func delete(_ call: LuaCall) throws -> LuaReturn {
        try write(call, key: try StoreSession.key(call), json: nil, what: "store.delete")
    }

    private func write(_ call: LuaCall, key: String, json: [UInt8]?, what: String) throws -> LuaReturn {
        let engine = call.engine
        let script = self.script, quota = self.quota
        return try call.wait("\(what) \(String(reflecting: key))", run { store in
            // Deleting frees room: only writes that keep something need it.
            if json != nil { try store.requireRoom() }
            try await store.setValue(json, script: script, key: key, quota: quota)
        }) {
            stack, result in
            if case .failure(let error) = result { return StoreSession.fail(error, on: stack, engine: engine) }
            stack.push(true)
            return 1
        }
    }

    /// `store.keys([prefix])` → sorted array of keys.
    func keys(_ call: LuaCall) throws -> LuaReturn {
        let prefix = try call.optionalString(1) ?? ""
        let engine = call.engine
        let script = self.script
        return try call.wait("store.keys", run { try await $0.keys(script: script, prefix: prefix) }) { stack, result in
            switch result {
            case .success(let keys): stack.push(.array(keys.map(LuaValue.text)))
            case .failure(let error): return StoreSession.fail(error, on: stack, engine: engine)
            }
            return 1
        }
    }

    /// `store.all()` → table of every key and value.
    func all(_ call: LuaCall) throws -> LuaReturn {
        let engine = call.engine
        let script = self.script
        return try call.wait("store.all", run { try await $0.entries(script: script) }) { stack, result in
            switch result {
            case .success(let entries):
                stack.pushTable(fields: entries.count)
                for (key, json) in entries {
                    if let problem = StoreSession.pushDecoded(json, key: key, on: stack, engine: engine) {
                        stack.pop()
                        return StoreSession.fail(problem, on: stack, engine: engine)
                    }
                    stack.setField(key, in: -2)
                }
            case .failure(let error):
                return StoreSession.fail(error, on: stack, engine: engine)
            }
            return 1
        }
    }
}
