import CLua
import Foundation
import LuaShim

/// One Lua state and everything that runs in it: tasks, waits, timers and host objects.
///
/// The engine belongs to a `LuaRuntime` actor and is used only on that actor's executor thread;
/// bindings reach it through `LuaCall.engine` while they run.
public final class LuaEngine {
    /// The actor that owns the engine (completions of Swift work come back through it).
    public let runtime: LuaRuntime
    /// The options the state was made with.
    public let options: LuaOptions
    /// The main thread of the state.
    public let L: OpaquePointer
    /// Memory and time budget, shared with C.
    let budget: UnsafeMutablePointer<ShimBudget>
    /// Distinguishes this state from earlier ones of the same runtime (REPL `.reset`).
    public let generation: UInt64
    let executor: LuaThreadExecutor

    var tasks: [Int: LuaTask] = [:]
    var ready: [LuaTask] = []
    var yielded: [LuaTask] = []
    var readyHead = 0
    var current: LuaTask?
    var draining = false
    var nextTaskID = 1
    var nextWaitID: UInt64 = 1
    var waits: [UInt64: PendingWait] = [:]
    /// Threads whose call returned without waiting, kept for the next call of a task spawned with
    /// `reusesThreads` (each with the registry reference that anchors it).
    var threadPool: [(thread: OpaquePointer, ref: Int32)] = []
    /// The function of the latest `spawnCall(…, reusesThreads: true)` batch, while tasks of it wait
    /// to start (the next spawn of the same function shares its reference).
    var pendingFunction: PendingFunction?
    /// Whether bindings read integer and number arguments (and their own upvalue) straight from
    /// Lua's stack, which start-up checked against the API (LuaShim `shim_direct_args`), or through
    /// the API. Setting it to true does nothing where the check failed; off only for tests and
    /// `lookout-bench` P1. Both ways keep the binding contract (no string becomes a number).
    public static var directArgumentReads: Bool {
        get {
            _ = installShim
            return shim_set_direct_args(-1) != 0
        }
        set {
            _ = installShim
            shim_set_direct_args(newValue ? 1 : 0)
        }
    }

    /// How many tasks ran on a thread from `threadPool` so far.
    public internal(set) var reusedThreadCount = 0
    /// Requests in flight and waiting for a slot (``LuaRequestGate``).
    var requestGate = LuaRequestGate()
    /// What the host buffers for the script outside the state (bodies of requests in flight),
    /// limited to the memory limit.
    public let hostBytes: LuaHostBytes
    var timerObjects: [UInt64: LuaTimer] = [:]
    /// Host timers (`after(seconds:_:)`): Swift work on the executor at a deadline.
    var hostTimers: [UInt64: (LuaEngine) -> Void] = [:]
    var idleWaiters: [CheckedContinuation<Void, Never>] = []
    var closed = false
    var objectTypes: Set<String> = []
    /// The display name of each registered object type, by metatable name (`nightscout client`).
    var objectTypeNames: [String: String] = [:]
    /// Objects to close when the state ends (streams, clients): anchored until closed.
    var liveObjects: [ObjectIdentifier: any LuaObject] = [:]
    /// Set by `script.exit(code)`: the script is ending with this status.
    public internal(set) var exitCode: Int32?
    /// Set when Ctrl-C / SIGTERM stopped the script.
    public internal(set) var interrupted = false
    /// Errors reported so far (the exit status of `run`).
    public internal(set) var errorCount = 0
    /// Registry reference of the `on_error` hook.
    var errorHook: Int32 = LUA_NOREF
    /// Modules registered with `register(module:)`, by name, for help and completion.
    public internal(set) var moduleNames: [String] = []
    /// Stub texts (LuaLS `---@meta`) of the registered modules.
    public internal(set) var stubs: [String: String] = [:]
    /// What `print` and `log` may still write (line size and rate).
    public var outputLimiter: LuaOutputLimiter
    /// Values host modules share for this state (e.g. whether side effects are recorded).
    public var hostContext: [String: any Sendable] = [:]
    let startTime = shim_now_ns()
    /// `executor.now` when the state was made (`script.uptime()` counts from it; virtual or real).
    let clockOrigin: Int64
    // REPL state (see LuaRuntime+REPL.swift).
    var replLineCount = 0
    var replLineTask: LuaTask?
    var replDriverRef: Int32 = LUA_NOREF
    var replCompleteRef: Int32 = LUA_NOREF

    init(runtime: LuaRuntime, executor: LuaThreadExecutor, options: LuaOptions, generation: UInt64) throws {
        self.runtime = runtime
        self.executor = executor
        self.options = options
        self.generation = generation
        hostBytes = LuaHostBytes(limit: options.memoryLimit)
        outputLimiter = LuaOutputLimiter(lineLimit: options.outputLineLimit, rate: options.outputRate, burst: options.outputBurst)
        clockOrigin = executor.now
        budget = .allocate(capacity: 1)
        budget.initialize(to: ShimBudget())
        budget.pointee.limit = options.memoryLimit > 0 ? options.memoryLimit : 0
        budget.pointee.slice_limit_ns = Quantities.nanoseconds(options.cpuLimit)

        LuaEngine.installShim
        let warnings = Unmanaged.passRetained(WarningSink(options.warnings)).toOpaque()
        guard let state = shim_newstate(budget, { ud, message in
            guard let ud, let message else { return }
            Unmanaged<WarningSink>.fromOpaque(ud).takeUnretainedValue().write(String(cString: message))
        }, warnings) else {
            budget.deallocate()
            throw LuaRaise("cannot create a Lua state: out of memory")
        }
        L = state
        warningSink = warnings
        shim_getextraspace(L).storeBytes(of: generation, as: UInt64.self)
        budget.pointee.host_critical += 1
        defer { budget.pointee.host_critical -= 1 }
        guard shim_openlibs(L) == LUA_OK else { throw LuaRaise("cannot open the Lua libraries") }
        shim_guard_patterns(L)  // string.find/match/gmatch/gsub that honour deadlines
        // string.rep, table.insert/remove/move/concat/sort with budget checks; no __gc for scripts.
        guard shim_guard_library(L, options.trusted ? 1 : 0) == LUA_OK else { throw LuaRaise("cannot guard the Lua libraries") }
        if options.timeLimit > 0 {
            budget.pointee.run_deadline = Quantities.deadline(startTime, after: Quantities.nanoseconds(options.timeLimit))
        }
        // Deadlines and interrupts arm the count hook only when reached: no tax on ordinary code.
        shim_watch_limits(L)
        try installCore()
    }

    private let warningSink: UnsafeMutableRawPointer

    deinit {
        shim_unwatch_limits(budget)  // before the threads it could arm are freed
        lua_close(L)
        Unmanaged<WarningSink>.fromOpaque(warningSink).release()
        budget.deallocate()
    }

    /// Wall-clock time as the script sees it (``LuaOptions/clock``).
    public var clock: LuaClock { options.clock }

    /// Bytes the state uses now, and at most so far.
    public var memory: (used: Int, peak: Int) { (budget.pointee.used, budget.pointee.peak) }

    /// Runs `body` with the memory limit raised by a bounded overdraft (`ShimBudget.overdraft`,
    /// 1 MiB): the host marshals values there, and an allocation failure would be a Lua error
    /// longjmping through Swift. What `body` allocates still counts toward the limit.
    func withMemoryOverdraft<T>(_ body: () throws -> T) rethrows -> T {
        budget.pointee.host_critical += 1
        defer { budget.pointee.host_critical -= 1 }
        return try body()
    }

    // MARK: References

    /// Anchors the value at `index` of thread `thread` in the registry.
    public func ref(at index: Int32, in thread: OpaquePointer) -> LuaRef {
        lua_pushvalue(thread, index)
        return LuaRef(ref: luaL_ref(thread, SHIM_REGISTRYINDEX), generation: generation)
    }

    /// Pushes a referenced value (nil when the ref belongs to another state generation).
    public func push(_ ref: LuaRef, on stack: LuaStack) {
        if ref.generation == generation {
            lua_rawgeti(stack.L, SHIM_REGISTRYINDEX, lua_Integer(ref.ref))
        } else {
            lua_pushnil(stack.L)
        }
    }

    /// Releases a reference.
    public func release(_ ref: LuaRef) {
        guard ref.generation == generation, !closed else { return }
        luaL_unref(L, SHIM_REGISTRYINDEX, ref.ref)
    }

    // MARK: Bindings

    /// Pushes a Lua function that runs `body`.
    /// - Parameters:
    ///   - name: the name errors use (`after`, `entries`).
    ///   - method: the function is called with `:`; argument #1 is the one after `self`.
    public func pushFunction(_ name: String, method: Bool = false, on stack: LuaStack? = nil, _ body: @escaping LuaBinding) {
        let box = BindingBox(name: name, offset: method ? 1 : 0, engine: self, body: body)
        shim_pushbinding((stack ?? LuaStack(L)).L, Unmanaged.passRetained(box).toOpaque())
    }

    /// Pushes a table of functions (a module or a methods table).
    public func pushLibrary(_ functions: [String: LuaBinding], prefix: String = "", method: Bool = false, on stack: LuaStack? = nil) {
        let s = stack ?? LuaStack(L)
        s.pushTable(fields: functions.count)
        for (name, body) in functions.sorted(by: { $0.key < $1.key }) {
            pushFunction(prefix + name, method: method, on: s, body)
            s.setField(name, in: -2)
        }
    }

    /// Sets a global from the value on top of the main stack (raw: no metamethod of `_G` runs).
    public func setGlobal(_ name: String) {
        withMemoryOverdraft { LuaStack(L).setGlobal(name) }
    }

    /// Registers the metatable of a host object type.
    public func register(type: LuaObjectType, methods: [String: LuaBinding]) {
        guard objectTypes.insert(type.name).inserted else { return }
        objectTypeNames[type.name] = type.displayName
        withMemoryOverdraft {
            let s = LuaStack(L)
            shim_newmetatable(L, type.name)
            s.push(type.name)
            s.setField("__name", in: -2)
            pushLibrary(methods, prefix: type.displayName.replacingOccurrences(of: " ", with: ".") + ":", method: true)
            s.setField("__index", in: -2)
            pushFunction("__tostring") { call in
                guard let raw = shim_testbox(call.L, 1, type.name) else {
                    call.stack.push("\(type.displayName) (closed)")
                    return .values(1)
                }
                let object = Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue()
                call.stack.push((object as? any LuaObject)?.luaDescription ?? type.displayName)
                return .values(1)
            }
            s.setField("__tostring", in: -2)
            pushFunction("__close") { call in
                if let raw = shim_testbox(call.L, 1, type.name),
                   let object = Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue() as? any LuaObject {
                    object.luaClose(engine: call.engine)
                }
                return .nothing
            }
            s.setField("__close", in: -2)
            s.pop()
        }
    }

    /// Pushes a host object as userdata (the userdata retains it; `__gc` releases it).
    public func push(object: AnyObject, type: LuaObjectType, on stack: LuaStack) {
        precondition(objectTypes.contains(type.name), "register(type:) \(type.name) first")
        shim_pushbox(stack.L, Unmanaged.passRetained(object).toOpaque(), type.name)
    }

    /// Keeps an object (a stream, a watcher) alive and closes it when the state ends.
    public func anchor(_ object: any LuaObject) { liveObjects[ObjectIdentifier(object)] = object }
    /// Stops keeping an object alive (it was closed).
    public func unanchor(_ object: any LuaObject) { liveObjects[ObjectIdentifier(object)] = nil }

    // MARK: Errors

    /// Pushes an error table with `__tostring`.
    public func push(error: LuaErrorInfo, on stack: LuaStack) {
        var fields: [String: LuaValue] = error.details
        fields["code"] = .text(error.code)
        fields["message"] = .text(error.message)
        fields["retryable"] = .bool(error.retryable)
        if let status = error.status { fields["status"] = .int(Int64(status)) }
        if let service = error.service { fields["service"] = .text(service) }
        stack.push(.object(fields))
        guard stack.ensure(2) else { return }
        stack.rawField(LuaEngine.errorMetatableKey, of: SHIM_REGISTRYINDEX)
        lua_setmetatable(stack.L, -2)
    }

    static let errorMetatableKey = "lookout.error_mt"

    /// Where the caller of the running binding is: `alerts.lua:12`.
    public func callSite(of thread: OpaquePointer, level: Int32 = 1) -> String {
        var ar = lua_Debug()
        guard lua_getstack(thread, level, &ar) != 0, lua_getinfo(thread, "Sl", &ar) != 0 else { return "?" }
        let source = withUnsafeBytes(of: ar.short_src) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return ar.currentline > 0 ? "\(source):\(ar.currentline)" : source
    }

    private static let installShim: Void = {
        shim_install(
            { L, box in
                guard let L, let box else { return Int32(SHIM_ERR) }
                // The Lua function owns the box for as long as it can be called.
                return Unmanaged<BindingBox>.fromOpaque(box)._withUnsafeGuaranteedRef { $0.invoke(L) }
            },
            { box in
                guard let box else { return }
                Unmanaged<AnyObject>.fromOpaque(box).release()
            })
    }()
}

/// A binding as stored in its Lua function's upvalue.
@usableFromInline
final class BindingBox {
    let name: String
    let offset: Int32
    unowned(unsafe) let engine: LuaEngine  // the engine closes the state (and so this box) first
    let body: LuaBinding

    init(name: String, offset: Int32, engine: LuaEngine, body: @escaping LuaBinding) {
        self.name = name
        self.offset = offset
        self.engine = engine
        self.body = body
    }

    func invoke(_ L: OpaquePointer) -> Int32 {
        let call = LuaCall(stack: LuaStack(L), binding: self)
        do {
            return try body(call).code
        } catch let error as LuaRaise {
            LuaStack(L).push(error.message)
        } catch let error as LuaConversionError {
            LuaStack(L).push("bad argument to '\(name)' (\(error.description))")
        } catch {
            LuaStack(L).push("\(name): \(LuaErrorInfo(error).message)")
        }
        return Int32(SHIM_ERR)
    }
}

/// Where Lua warnings go (kept alive for the state's lifetime).
final class WarningSink {
    let write: @Sendable (String) -> Void
    init(_ write: @escaping @Sendable (String) -> Void) { self.write = write }
}
