import CLua
import Foundation
import Lua
import LuaShim

/// `store`: a persistent key/value store per script (`engine.options.name`), in the shared
/// state database (`StateStore`, table `kv`).
///
/// Values are JSON encoded by the C codec, so they read back exactly as `json.decode(json.encode(v))`
/// would give them. Every call waits on a Swift task (the database is never used on the Lua
/// thread) and looks synchronous to scripts. `store.update` is Lua code over private
/// primitives, so its function may itself wait; it holds a per-key lock shared by every runtime
/// of the process and writes by compare-and-swap, which also guards against other processes.
struct StoreModule: LuaModule {
    let name = "store"
    var stub: String { String(decoding: PackageResources.store_lua, as: UTF8.self) }

    /// Opens the database, on first use and off the Lua thread.
    let open: @Sendable () throws -> StateStore
    /// Names the database in lock keys (its path).
    let databaseID: String

    /// A module over an open store (tests, or a host that opened it already).
    init(store: StateStore) {
        open = { store }
        databaseID = store.path ?? "memory:\(UInt(bitPattern: ObjectIdentifier(store).hashValue))"
    }

    /// A module over the process's store at `paths.databaseFile`, opened when a script first
    /// uses it (an error opening it is the `err` of that call).
    init(paths: LookoutPaths) {
        open = { try StateStore.shared(paths: paths) }
        databaseID = paths.databaseFile
    }

    /// Longest key, in bytes.
    static let maximumKeyLength = 1024

    func push(into engine: LuaEngine, stack: LuaStack) throws {
        let session = StoreSession(open: open, databaseID: databaseID, script: engine.options.name)
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
    let open: @Sendable () throws -> StateStore
    let databaseID: String
    let script: String

    /// Runs a database operation off the Lua thread; failures become the error scripts see.
    func run<T: Sendable>(_ body: @escaping @Sendable (StateStore) async throws -> T) -> @Sendable () async -> Result<T, LuaErrorInfo> {
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
        let script = self.script
        return try call.wait("\(what) \(String(reflecting: key))", run { try await $0.setValue(json, script: script, key: key) }) {
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

// MARK: store.update

/// `store.update(key, fn)`: Lua code (so `fn` may wait) over private bindings.
///
/// 1. take the in-process lock of (database, script, key), waiting while another task holds it;
/// 2. read the value, call `fn(old)`, write the result only if the value is still what was read
///    (compare-and-swap in one transaction); if something else changed it meanwhile (another
///    process, or `store.set`), read again and call `fn` again, at most 20 times;
/// 3. release the lock from a to-be-closed variable, so errors in `fn` and cancelled tasks
///    release it too.
enum StoreUpdate {
    static let source = """
        local store, p = ...
        local isyieldable, setmetatable, error, type = coroutine.isyieldable, setmetatable, error, type
        local ATTEMPTS = 20

        function store.update(...)
          local problem = p.check(...)  -- "no value" for a missing argument, like the bindings
          local key, fn = ...
          if problem then error(problem, 2) end
          if not isyieldable() then error(p.cannot_wait, 2) end
          local token, holder = p.lock(key)
          while not token do
            if type(holder) == "string" then error(holder, 2) end
            p.wait(key, holder)
            token, holder = p.lock(key)
          end
          local release <close> = setmetatable({}, { __close = function() p.unlock(key, token) end })
          for _ = 1, ATTEMPTS do
            local ok, old, seen = p.read(key)
            if not ok then return nil, old end
            local new = fn(old)
            local written, err = p.swap(key, seen, new)
            if written then return new end
            if written == nil then
              if type(err) == "string" then error(err, 2) end
              return nil, err
            end
          end
          return nil, p.conflict(key, ATTEMPTS)
        end
        """

    /// Defines `store.update` in the module table on top of `stack`.
    static func install(session: StoreSession, engine: LuaEngine, stack: LuaStack) throws {
        let L = stack.L
        let module = lua_absindex(L, -1)
        var text = source
        let status = text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { shim_loadtext(L, $0.baseAddress, $0.count, "=[lookout] store") }
        }
        guard status == LUA_OK else {
            defer { stack.pop() }
            throw LuaRaise("store: \(stack.string(at: -1) ?? "cannot load store.update")")
        }
        stack.pushCopy(of: module)
        pushPrimitives(session: session, engine: engine, stack: stack)
        guard shim_pcall_traceback(L, 2, 0) == LUA_OK else {
            defer { stack.pop() }
            throw LuaRaise("store: \(stack.string(at: -1) ?? "cannot define store.update")")
        }
    }

    private static func pushPrimitives(session: StoreSession, engine: LuaEngine, stack: LuaStack) {
        let locks = StoreUpdateLocks.shared
        func lockKey(_ key: String) -> StoreUpdateLocks.Key {
            StoreUpdateLocks.Key(database: session.databaseID, script: session.script, key: key)
        }
        let primitives: [String: LuaBinding] = [
            // (key, fn) -> nil, or the message of a bad argument (raised by the Lua side at the caller)
            "check": { call in
                do throws(LuaRaise) {
                    _ = try StoreSession.key(call, 1)
                    guard lua_type(call.L, call.index(2)) == LUA_TFUNCTION else {
                        let got = lua_type(call.L, call.index(2)) == LUA_TNONE ? "no value" : call.stack.typeName(at: call.index(2))
                        throw call.argumentError(2, "function expected, got \(got)")
                    }
                    return .nothing
                } catch {
                    return call.returning(.text(error.message))
                }
            },
            // key -> token | false, holder token | nil, message (this task holds it already)
            "lock": { call in
                let key = try StoreSession.key(call, 1)
                guard let task = call.engine.currentTask else { throw LuaRaise("store.update must be called from a task") }
                let owner = StoreUpdateLocks.Owner(engine: ObjectIdentifier(call.engine), task: task.id)
                switch locks.tryLock(lockKey(key), owner: owner) {
                case .acquired(let token): return call.returning(.int(Int64(bitPattern: token)))
                case .busy(let holder): return call.returning(false, .int(Int64(bitPattern: holder)))
                case .heldByCaller:
                    return call.returning(
                        .nil, .text("store.update: \(String(reflecting: key)) is already being updated by this task "
                            + "(a nested store.update of the same key would wait for itself)"))
                }
            },
            // key, holder token: waits until that holder released the key
            "wait": { call in
                let key = lockKey(try StoreSession.key(call, 1))
                let holder = UInt64(bitPattern: try call.integer(2))
                return try call.wait("store.update lock", { await locks.waitForRelease(key, holder: holder) }) { _, _ in 0 }
            },
            "unlock": { call in
                locks.unlock(lockKey(try StoreSession.key(call, 1)), token: UInt64(bitPattern: try call.integer(2)))
                return .nothing
            },
            // key -> true, value, raw JSON | false, err
            "read": { call in
                let key = try StoreSession.key(call, 1)
                let script = session.script
                let engine = call.engine
                return try call.wait("store.update read", session.run { try await $0.value(script: script, key: key) }) {
                    stack, result in
                    switch result {
                    case .success(let json?):
                        stack.push(true)
                        if let problem = StoreSession.pushDecoded(json, key: key, on: stack, engine: engine) {
                            stack.pop()
                            stack.push(false)
                            engine.push(error: problem, on: stack)
                            return 2
                        }
                        stack.push(bytes: json)
                        return 3
                    case .success(nil):
                        stack.push(true)
                        return 1
                    case .failure(let error):
                        stack.push(false)
                        engine.push(error: error, on: stack)
                        return 2
                    }
                }
            },
            // key, raw JSON read (or nil), new value -> true | false (changed meanwhile) | nil, err | nil, message
            "swap": { call in
                let key = try StoreSession.key(call, 1)
                let expected = call.isNil(2) ? nil : try call.bytes(2)
                let json: [UInt8]?
                do throws(LuaJSONError) {
                    json = call.isNil(3) ? nil : try LuaJSONCodec.encode(call.stack, at: call.index(3))
                } catch {
                    return call.returning(
                        .nil, .text("store.update: the function returned a value that is not JSON-encodable: \(error.message)"))
                }
                let script = session.script
                let engine = call.engine
                return try call.wait("store.update write", session.run {
                    try await $0.replaceValue(script: script, key: key, expected: expected, with: json)
                }) { stack, result in
                    switch result {
                    case .success(let replaced):
                        stack.push(replaced)
                        return 1
                    case .failure(let error):
                        return StoreSession.fail(error, on: stack, engine: engine)
                    }
                }
            },
            "conflict": { call in
                let key = try StoreSession.key(call, 1)
                let attempts = try call.integer(2)
                call.engine.push(error: LuaErrorInfo(
                    code: "conflict", message: "store.update: \(String(reflecting: key)) kept changing while it was "
                        + "being updated (\(attempts) attempts)", retryable: true), on: call.stack)
                return .values(1)
            },
        ]
        stack.pushTable(fields: primitives.count + 1)
        for (name, body) in primitives {
            engine.pushFunction("store.update", on: stack, body)
            stack.setField(name, in: -2)
        }
        stack.push("store.update cannot wait here: it was called from code that cannot yield (a table.sort "
            + "comparator, a string.gsub callback, __tostring, __gc, or the top level of a required file); call it "
            + "from the script body, a function, or task.spawn(fn)")
        stack.setField("cannot_wait", in: -2)
    }
}

/// The in-process locks of `store.update`, one per (database, script, key), shared by every
/// runtime of the process.
///
/// Waiting never hands the lock over: a released lock wakes every waiter and each tries again
/// (`tryLock`), so a waiter that was cancelled meanwhile cannot leave a lock taken forever.
/// A waiter passes the token of the holder it saw, so a release that happens before it starts
/// waiting is not missed.
final class StoreUpdateLocks: Sendable {
    /// The locks of the process.
    static let shared = StoreUpdateLocks()

    /// What is locked.
    struct Key: Hashable, Sendable {
        let database: String
        let script: String
        let key: String
    }

    /// Who holds a lock: a task of an engine.
    struct Owner: Hashable, Sendable {
        let engine: ObjectIdentifier
        let task: Int
    }

    /// The outcome of `tryLock`.
    enum Attempt: Equatable {
        /// Taken; release with this token.
        case acquired(UInt64)
        /// Held by the holder with this token.
        case busy(holder: UInt64)
        /// Held by the same task already.
        case heldByCaller
    }

    private struct State {
        var holders: [Key: (token: UInt64, owner: Owner)] = [:]
        var waiters: [Key: [UInt64: CheckedContinuation<Void, Never>]] = [:]
        var nextToken: UInt64 = 1
    }

    private let state = Locked(State())

    /// Takes the lock if it is free.
    func tryLock(_ key: Key, owner: Owner) -> Attempt {
        state.withLock { s in
            if let holder = s.holders[key] {
                return holder.owner == owner ? .heldByCaller : .busy(holder: holder.token)
            }
            let token = s.nextToken
            s.nextToken += 1
            s.holders[key] = (token, owner)
            return .acquired(token)
        }
    }

    /// Releases the lock taken with `token` and wakes every waiter of `key`.
    func unlock(_ key: Key, token: UInt64) {
        let woken = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            guard s.holders[key]?.token == token else { return [] }
            s.holders[key] = nil
            return Array((s.waiters.removeValue(forKey: key) ?? [:]).values)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns once `key` is no longer held by `holder` (at once if it is not), or when the
    /// calling task is cancelled.
    func waitForRelease(_ key: Key, holder: UInt64) async {
        let id = state.withLock { s -> UInt64 in
            defer { s.nextToken += 1 }
            return s.nextToken
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if Task.isCancelled || s.holders[key]?.token != holder { return true }
                    s.waiters[key, default: [:]][id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { s -> CheckedContinuation<Void, Never>? in
                let found = s.waiters[key]?.removeValue(forKey: id)
                if s.waiters[key]?.isEmpty == true { s.waiters[key] = nil }
                return found
            }
            continuation?.resume()
        }
    }

    /// Whether any lock is held (tests).
    var isIdle: Bool { state.withLock { $0.holders.isEmpty && $0.waiters.isEmpty } }
}
