import CLua
import LuaShim

/// A Swift function callable from Lua. It runs on the state's executor, inside `lua_resume`;
/// it reads its arguments from `call`, pushes results and returns how many, or starts a wait.
/// A thrown error becomes a Lua error raised by the C trampoline (never a longjmp through Swift).
public typealias LuaBinding = (LuaCall) throws -> LuaReturn

/// What a binding hands back to the trampoline.
public struct LuaReturn: Sendable {
    let code: Int32
    /// `n` values were pushed.
    public static func values(_ n: Int32) -> LuaReturn { LuaReturn(code: n) }
    /// No results.
    public static let nothing = LuaReturn(code: 0)
    /// The task waits; it resumes with the results the wait pushes.
    static let await = LuaReturn(code: Int32(SHIM_AWAIT))
}

/// A programmer error raised in Lua with exactly this message (e.g. `bad argument #1 to 'x'`).
public struct LuaRaise: Error, CustomStringConvertible, Sendable {
    /// The message Lua sees.
    public var message: String
    /// Creates an error with a message.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// One call of a binding: its arguments, its engine, and helpers to answer.
///
/// Argument numbers are the ones the script sees: for methods (`obj:name(a)`) `a` is #1 and the
/// object is `self`.
public struct LuaCall {
    /// The stack of the calling thread.
    public let stack: LuaStack
    /// The binding being called. A `LuaCall` lives only while its binding runs, so the binding
    /// (owned by its Lua function) outlives it; unowned(unsafe) keeps the hot path free of
    /// reference counting.
    @usableFromInline unowned(unsafe) let binding: BindingBox
    /// 1 for methods: argument #1 is at stack index 2.
    @usableFromInline let offset: Int32

    init(stack: LuaStack, binding: BindingBox) {
        self.stack = stack
        self.binding = binding
        self.offset = binding.offset
    }

    /// The engine of the state.
    public var engine: LuaEngine { binding.engine }
    /// The function's name in messages (`entries`, `timer.after`).
    public var name: String { binding.name }

    /// The calling thread.
    public var L: OpaquePointer { stack.L }

    /// Whether the caller may wait here (a binding may yield). `coroutine.isyieldable()` is false in
    /// a task's own body, where waits are fine: host code asks this instead.
    public var canWait: Bool { lua_isyieldable(L) != 0 }

    /// Number of arguments (not counting `self`).
    public var count: Int { Int(max(0, lua_gettop(L) - offset)) }

    /// Stack index of argument `n`.
    @inlinable
    public func index(_ n: Int) -> Int32 { Int32(truncatingIfNeeded: n) &+ offset }

    /// Whether argument `n` is absent or nil.
    public func isNil(_ n: Int) -> Bool { lua_type(L, index(n)) <= LUA_TNIL }

    /// A `bad argument` error in Lua's own style.
    public func argumentError(_ n: Int, _ message: String) -> LuaRaise {
        LuaRaise("bad argument #\(n) to '\(name)' (\(message))")
    }

    private func typeError(_ n: Int, expected: String) -> LuaRaise {
        let got = lua_type(L, index(n)) == LUA_TNONE ? "no value" : stack.typeName(at: index(n))
        return argumentError(n, "\(expected) expected, got \(got)")
    }

    /// Argument `n` as a string (numbers are not accepted silently).
    public func string(_ n: Int) throws(LuaRaise) -> String {
        guard let s = stack.string(at: index(n)) else { throw typeError(n, expected: "string") }
        return s
    }

    /// Argument `n` as a string, or nil when absent.
    public func optionalString(_ n: Int) throws(LuaRaise) -> String? {
        isNil(n) ? nil : try string(n)
    }

    /// Argument `n` as bytes.
    public func bytes(_ n: Int) throws(LuaRaise) -> [UInt8] {
        guard let b = stack.bytes(at: index(n)) else { throw typeError(n, expected: "string") }
        return b
    }

    /// Argument `n` as an integer (a float with an integral value is accepted).
    @inlinable
    public func integer(_ n: Int) throws(LuaRaise) -> Int64 {
        if let i = stack.integer(at: index(n)) { return i }
        throw integerError(n)
    }

    @usableFromInline
    func integerError(_ n: Int) -> LuaRaise {
        if lua_type(L, index(n)) == LUA_TNUMBER { return argumentError(n, "number has no integer representation") }
        return typeError(n, expected: "integer")
    }

    /// Argument `n` as a number.
    public func number(_ n: Int) throws(LuaRaise) -> Double {
        guard let d = stack.number(at: index(n)) else { throw typeError(n, expected: "number") }
        return d
    }

    /// Argument `n` as a boolean; nil/absent is `defaultValue`.
    public func boolean(_ n: Int, default defaultValue: Bool = false) throws(LuaRaise) -> Bool {
        switch lua_type(L, index(n)) {
        case LUA_TNONE, LUA_TNIL: return defaultValue
        case LUA_TBOOLEAN: return lua_toboolean(L, index(n)) != 0
        default: throw typeError(n, expected: "boolean")
        }
    }

    /// Argument `n` as a duration in seconds: a number or text like `"90s"`, `"5m"`, `"1h30m"`,
    /// inside `range` (see ``LuaRange``: NaN, infinities and out-of-range values raise).
    public func duration(_ n: Int, in range: LuaRange = .duration, what: String = "duration") throws(LuaRaise) -> Double {
        if let d = stack.number(at: index(n)) {
            return try checked(d, n, range, what)
        }
        if let s = stack.string(at: index(n)) {
            return try duration(.string(LuaString(s)), argument: n, what: what, in: range)
        }
        throw typeError(n, expected: "number or duration string")
    }

    /// A duration inside an option table (`opts.timeout`): seconds or text such as `"90s"`,
    /// inside `range`; `what` names it in the error of argument `n`.
    public func duration(_ value: LuaValue, argument n: Int, what: String, in range: LuaRange = .duration) throws(LuaRaise) -> Double {
        switch value {
        case .int, .double:
            return try checked(value.double ?? .nan, n, range, what)
        case .string(let s):
            guard let text = s.text, let d = Quantities.parseDuration(text) else {
                throw argumentError(n, (what == "duration" ? "" : "\(what): ") + "invalid duration \(String(reflecting: s.description)); use seconds or text such as \"90s\", \"5m\", \"1h\"")
            }
            guard let ok = range.check(d) else {
                throw argumentError(n, range.problem(what, got: String(reflecting: s.description)))
            }
            return ok
        default:
            throw argumentError(n, "\(what): number or duration string expected, got \(value.typeName)")
        }
    }

    /// Argument `n` as a number inside `range` (NaN, infinities and out-of-range values raise).
    public func number(_ n: Int, in range: LuaRange, what: String = "number") throws(LuaRaise) -> Double {
        try checked(try number(n), n, range, what)
    }

    /// A number inside an option table (`opts.max`), inside `range`.
    public func number(_ value: LuaValue, argument n: Int, what: String, in range: LuaRange) throws(LuaRaise) -> Double {
        guard let d = value.double else { throw argumentError(n, "\(what): number expected, got \(value.typeName)") }
        return try checked(d, n, range, what)
    }

    /// Argument `n` as an integer inside `range` (a float with an integral value is accepted).
    public func integer(_ n: Int, in range: LuaRange, what: String = "integer") throws(LuaRaise) -> Int64 {
        if let d = stack.number(at: index(n)), stack.integer(at: index(n)) == nil, !d.isFinite || range.check(d) == nil {
            throw argumentError(n, range.problem(what, got: LuaRange.numberText(d)))
        }
        let i = try integer(n)
        guard let ok = range.check(i) else { throw argumentError(n, range.problem(what, got: String(i))) }
        return ok
    }

    /// An integer inside an option table (`opts.count`), inside `range`.
    public func integer(_ value: LuaValue, argument n: Int, what: String, in range: LuaRange) throws(LuaRaise) -> Int64 {
        switch value {
        case .int(let i):
            guard let ok = range.check(i) else { throw argumentError(n, range.problem(what, got: String(i))) }
            return ok
        case .double(let d):
            guard range.check(d) != nil else { throw argumentError(n, range.problem(what, got: LuaRange.numberText(d))) }
            guard let i = Int64(exactly: d) else { throw argumentError(n, "\(what): number has no integer representation") }
            return i
        default:
            throw argumentError(n, "\(what): integer expected, got \(value.typeName)")
        }
    }

    private func checked(_ d: Double, _ n: Int, _ range: LuaRange, _ what: String) throws(LuaRaise) -> Double {
        guard let ok = range.check(d) else { throw argumentError(n, range.problem(what, got: LuaRange.numberText(d))) }
        return ok
    }

    /// Argument `n` as a function, anchored in the registry until released.
    public func function(_ n: Int) throws(LuaRaise) -> LuaRef {
        guard lua_type(L, index(n)) == LUA_TFUNCTION else { throw typeError(n, expected: "function") }
        return engine.ref(at: index(n), in: L)
    }

    /// Argument `n` copied into Swift; errors name the path inside the argument.
    public func value(_ n: Int, name argName: String = "value") throws(LuaRaise) -> LuaValue {
        do {
            return try stack.value(at: index(n), path: argName)
        } catch {
            throw argumentError(n, error.description)
        }
    }

    /// Argument `n` as a table converted to Swift (nil when absent), for option tables.
    public func options(_ n: Int, name argName: String = "opts") throws(LuaRaise) -> [String: LuaValue] {
        switch lua_type(L, index(n)) {
        case LUA_TNONE, LUA_TNIL: return [:]
        case LUA_TTABLE:
            switch try value(n, name: argName) {
            case .object(let o): return o
            case .array(let a) where a.isEmpty: return [:]
            default: throw argumentError(n, "\(argName): expected a table of named options")
            }
        default: throw typeError(n, expected: "table")
        }
    }

    /// The host object at stack index `index` if it is of `type` and still open, else nil (no error).
    public func openObject<T: AnyObject>(at index: Int32, as: T.Type, type: LuaObjectType) -> T? {
        guard let raw = shim_testbox(L, index, type.name) else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue() as? T
    }

    /// `obj:close()` for a host object type: closes `self` once (later calls do nothing) and
    /// releases it; raises when `self` is not of `type`.
    public func closeSelf(type: LuaObjectType) throws(LuaRaise) {
        guard luaL_testudata(L, 1, type.name) != nil else {
            throw LuaRaise("bad self to '\(name)' (\(type.displayName) expected, got \(stack.typeName(at: 1))); call it with ':'")
        }
        guard let raw = shim_takebox(L, 1, type.name) else { return }
        let object = Unmanaged<AnyObject>.fromOpaque(raw)
        (object.takeUnretainedValue() as? any LuaObject)?.luaClose(engine: engine)
        object.release()
    }

    /// The host object behind `self` (or argument `n`), if it is of `type` and still open.
    public func object<T: AnyObject>(_ n: Int = 0, as: T.Type, type: LuaObjectType) throws(LuaRaise) -> T {
        let i = n == 0 ? 1 : index(n)
        guard let raw = shim_testbox(L, i, type.name),
              let object = Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue() as? T
        else {
            if n == 0 {
                if luaL_testudata(L, 1, type.name) != nil {
                    throw LuaRaise("attempt to use a closed \(type.displayName)")
                }
                throw LuaRaise("bad self to '\(name)' (\(type.displayName) expected, got \(stack.typeName(at: 1))); call it with ':'")
            }
            throw typeError(n, expected: type.displayName)
        }
        return object
    }

    // MARK: Answering

    /// Pushes values and returns them.
    public func returning(_ values: LuaValue...) -> LuaReturn {
        for v in values { stack.push(v) }
        return .values(Int32(values.count))
    }

    /// Pushes `nil, err` for an expected failure.
    public func failure(_ error: LuaErrorInfo) -> LuaReturn {
        stack.pushNil()
        engine.push(error: error, on: stack)
        return .values(2)
    }

    /// Pushes a host object as userdata of `type`.
    public func push(object: AnyObject, type: LuaObjectType) {
        engine.push(object: object, type: type, on: stack)
    }

    /// Waits for Swift async work without blocking other tasks. When `operation` finishes, the task
    /// resumes with what `deliver` pushes; a thrown error resumes it with `nil, err`.
    ///
    /// Raises, before anything starts, when the calling code cannot yield (a `table.sort`
    /// comparator, a `string.gsub` callback, `__tostring`, the top level of a required file).
    ///
    /// Under virtual time (`LuaClock.virtual`) the clock stands still while `operation` runs,
    /// unless `event` is true: a wait for something from outside that may never come (a stream's
    /// next message) lets virtual time move on.
    public func wait<T: Sendable>(
        _ what: String, event: Bool = false,
        _ operation: @escaping @Sendable () async throws -> T,
        deliver: @escaping (LuaStack, T) -> Int32
    ) throws(LuaRaise) -> LuaReturn {
        try waitForHost(what, event: event, counted: false, operation, deliver: deliver)
    }

    /// ``wait(_:event:_:deliver:)``, as a request (`counted`) under the state's ``LuaRequestGate`` or not.
    func waitForHost<T: Sendable>(
        _ what: String, event: Bool, counted: Bool,
        _ operation: @escaping @Sendable () async throws -> T,
        deliver: @escaping (LuaStack, T) -> Int32
    ) throws(LuaRaise) -> LuaReturn {
        try engine.beginWait(
            in: self, what: what, hostWork: !event, event: event, counted: counted,
            deliver: { engine, stack, result in
                switch result {
                case .success(let value): return deliver(stack, value as! T)
                case .failure(let error):
                    stack.pushNil()
                    engine.push(error: LuaErrorInfo(error), on: stack)
                    return 2
                }
            },
            start: { engine, id in
                let runtime = engine.runtime
                // A lease that moved on stops host work from starting, queued requests included.
                let refusal = event ? nil : engine.options.lease?.refusal()
                let task = Task {
                    let result: Result<any Sendable, any Error>
                    if let refusal {
                        result = .failure(LuaErrorInfo(code: "lease", message: "\(what): \(refusal)"))
                    } else {
                        do { result = .success(try await operation()) } catch { result = .failure(error) }
                    }
                    // A cancelled wait was already removed (the task or the state ended): do not
                    // hop back to a runtime that may have stopped its executor.
                    guard !Task.isCancelled else { return }
                    await runtime.complete(wait: id, result: result)
                }
                return { task.cancel() }
            })
    }

    /// Waits `seconds` on the state's clock.
    public func sleep(_ seconds: Double) throws(LuaRaise) -> LuaReturn {
        try engine.beginWait(
            in: self, what: "sleep \(Quantities.formatDuration(seconds))", sleeps: true,
            deliver: { _, _, _ in 0 },
            start: { engine, id in
                engine.armTimer(id: id, after: seconds)
                return { [weak engine] in engine?.cancelTimer(id: id) }
            })
    }
}
