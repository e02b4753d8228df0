import CLua
import LuaShim

/// `script`: name, args, on_error, exit, sleep, uptime, memory.
struct ScriptModule: LuaModule {
    let name = "script"
    var stub: String { String(decoding: PackageResources.script_lua, as: UTF8.self) }

    func push(into engine: LuaEngine, stack: LuaStack) throws {
        engine.pushLibrary([
            "on_error": { call in
                let engine = call.engine
                if engine.errorHook != LUA_NOREF { luaL_unref(engine.L, SHIM_REGISTRYINDEX, engine.errorHook) }
                engine.errorHook = LUA_NOREF
                if !call.isNil(1) { engine.errorHook = try call.function(1).ref }
                return .nothing
            },
            "exit": { call in
                let code = call.isNil(1) ? 0 : try call.integer(1)
                call.engine.requestExit(code: Int32(clamping: code))
                throw LuaRaise(LuaEngine.exitMessage)
            },
            "sleep": { call in try call.sleep(try call.duration(1)) },
            "uptime": { call in
                call.stack.push(Double(call.engine.executor.now - call.engine.clockOrigin) / 1e9)
                return .values(1)
            },
            "memory": { call in
                call.stack.push(call.engine.memory.used)
                call.stack.push(call.engine.options.memoryLimit)
                return .values(2)
            },
        ], prefix: "script.", on: stack)
        stack.push(engine.options.name)
        stack.setField("name", in: -2)
        stack.push(.array(engine.options.arguments.dropFirst().map { .text($0) }))
        stack.setField("args", in: -2)
    }
}

/// The modules every state has.
enum CoreModules {
    static let all: [any LuaModule] = [JSONModule(), TimerModule(), TaskModule(), ScriptModule()]
}

extension LuaEngine {
    /// Marks the script as exiting with `code`; the unwinding error is not reported.
    func requestExit(code: Int32) {
        if exitCode == nil { exitCode = code }
    }

    func isExitUnwind(_ errorText: String) -> Bool {
        exitCode != nil && errorText.contains(LuaEngine.exitMessage)
    }
}
