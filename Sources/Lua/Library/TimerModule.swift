import CLua
import LuaShim

/// `timer`: `after`, `every`, `seconds`; handles with `stop` and `running`.
struct TimerModule: LuaModule {
    let name = "timer"
    let isGlobal = true
    var stub: String { String(decoding: PackageResources.timer_lua, as: UTF8.self) }

    func push(into engine: LuaEngine, stack: LuaStack) throws {
        engine.register(type: LuaTimer.type, methods: [
            "stop": { call in
                let timer = try call.object(as: LuaTimer.self, type: LuaTimer.type)
                call.stack.push(timer.stop(engine: call.engine))
                return .values(1)
            },
            "running": { call in
                let timer = try call.object(as: LuaTimer.self, type: LuaTimer.type)
                call.stack.push(timer.isRunning)
                return .values(1)
            },
        ])
        engine.pushLibrary([
            "after": { call in try TimerModule.make(call, repeats: false) },
            "every": { call in try TimerModule.make(call, repeats: true) },
            "seconds": { call in
                call.stack.push(try call.duration(1))
                return .values(1)
            },
        ], prefix: "timer.", on: stack)
    }

    /// Most pending timers one script may have.
    static let maximumTimers = 10_000

    static func make(_ call: LuaCall, repeats: Bool) throws -> LuaReturn {
        let engine = call.engine
        let interval = try call.duration(1)
        if repeats, interval < 0.001 {
            throw call.argumentError(1, "interval must be at least 1ms")
        }
        var fnArgument = 2
        var continueOnError = false
        if lua_type(call.L, call.index(2)) == LUA_TTABLE {
            let options = try call.options(2)
            for key in options.keys where key != "continue_on_error" {
                throw call.argumentError(2, "unknown option '\(key)' (known: continue_on_error)")
            }
            if case .bool(let b)? = options["continue_on_error"] { continueOnError = b }
            fnArgument = 3
        }
        guard lua_type(call.L, call.index(fnArgument)) == LUA_TFUNCTION else {
            throw call.argumentError(fnArgument, "function expected, got \(call.stack.typeName(at: call.index(fnArgument)))")
        }
        guard engine.timerObjects.count < maximumTimers else {
            throw LuaRaise("too many pending timers (limit \(maximumTimers)); stop timers you no longer need")
        }
        // Anchor {fn, args..., n = count} in the registry.
        let L = call.L
        let first = call.index(fnArgument)
        let count = lua_gettop(L) - first + 1
        guard call.stack.ensure(3) else { throw LuaRaise("stack overflow (too many arguments to \(call.name))") }
        lua_createtable(L, count, 1)
        for i in 0..<count {
            lua_pushvalue(L, first + i)
            lua_rawseti(L, -2, lua_Integer(i + 1))
        }
        lua_pushinteger(L, lua_Integer(count))
        call.stack.setField("n", in: -2)
        let ref = luaL_ref(L, SHIM_REGISTRYINDEX)

        let id = engine.newTimerID()
        let deadline = Quantities.deadline(engine.executor.now, after: Quantities.nanoseconds(interval))
        let timer = LuaTimer(
            id: id, interval: interval, repeats: repeats, continueOnError: continueOnError,
            createdAt: engine.callSite(of: L), callbackRef: ref, deadline: deadline)
        engine.timerObjects[id] = timer
        engine.executor.schedule(timer: id, at: deadline)
        call.push(object: timer, type: LuaTimer.type)
        return .values(1)
    }
}
