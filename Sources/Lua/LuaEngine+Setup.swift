import CLua
import Foundation
import LuaShim

extension LuaEngine {
    /// The error metatable, the prelude (sandbox), the core modules and the bundled Lua modules.
    func installCore() throws {
        let s = LuaStack(L)
        // Error tables: `tostring(err)` gives "service: HTTP 401: message".
        s.pushTable(fields: 3)
        s.push("lookout.error")
        s.setField("__name", in: -2)
        // Hidden from getmetatable: a script adding __gc to it would have the host mark every later
        // error table for a finalizer (lua_setmetatable), which would run without limits.
        s.push(false)
        s.setField("__metatable", in: -2)
        pushFunction("__tostring") { call in
            let t = call.index(1)
            func field(_ key: String) -> String? {
                call.stack.rawField(key, of: t)
                defer { call.stack.pop() }
                if let text = call.stack.string(at: -1) { return text }
                return call.stack.integer(at: -1).map(String.init)
            }
            call.stack.push(LuaErrorInfo.text(service: field("service"), status: field("status"), message: field("message") ?? "error"))
            return .values(1)
        }
        s.setField("__tostring", in: -2)
        s.setField(LuaEngine.errorMetatableKey, in: SHIM_REGISTRYINDEX)

        try runPrelude()
        for module in CoreModules.all { try register(module: module) }
        // json loads even without conveniences: the value bridge marks arrays with json.array_mt.
        if !options.conveniences { try require("json", asGlobal: false) }
        for chunk in BundledChunk.all { preloadLazily(chunk) }
    }

    /// Registers `chunk` in `package.preload`, compiled only when a script requires it: most
    /// states never load the REPL support or the help pages.
    private func preloadLazily(_ chunk: BundledChunk) {
        withMemoryOverdraft {
            let s = LuaStack(L)
            s.rawField(LUA_PRELOAD_TABLE, of: SHIM_REGISTRYINDEX)
            shim_pushlazychunk(L, chunk.text.baseAddress, chunk.text.count, "=[lookout] \(chunk.name)")
            s.setField(chunk.name, in: -2)
            s.pop()
        }
    }

    private func runPrelude() throws {
        let s = LuaStack(L)
        let source = PackageResources.sandbox_lua
        let status = source.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                shim_loadtext(L, chars.baseAddress, chars.count, "=[lookout] prelude")
            }
        }
        guard status == LUA_OK else { throw LuaRaise("prelude: \(s.string(at: -1) ?? "?")") }
        pushHostTable()
        guard shim_pcall_traceback(L, 1, 0) == LUA_OK else {
            defer { s.pop() }
            throw LuaRaise("prelude: \(s.string(at: -1) ?? "?")")
        }
    }

    /// Functions only the prelude sees.
    private func pushHostTable() {
        let s = LuaStack(L)
        let output = options.output
        let scriptDirectory = options.scriptDirectory
        let trusted = options.trusted
        pushLibrary([
            "write": { call in
                let (pass, summary) = call.engine.outputLimiter.admit()
                guard pass else { return .nothing }
                // --trusted: io.write's buffer goes out first, so print and io.write keep their order.
                if trusted { shim_flush_stdout() }
                if let summary { output(summary) }
                output(call.engine.outputLimiter.cut(try call.string(1)))
                return .nothing
            },
            "drop_wait": { call in
                call.engine.dropUnstartedWait()
                return .nothing
            },
            "find_module": { call in
                let name = try call.string(1)
                return call.returning(contentsOf: ModuleSearch.find(name, in: scriptDirectory))
            },
            "exit": { call in
                let code = call.isNil(1) ? 0 : try call.integer(1)
                call.engine.requestExit(code: Int32(clamping: code))
                throw LuaRaise(LuaEngine.exitMessage)
            },
        ])
        if !options.clock.isSystem {
            // os.time() and os.date() read the script's clock when it is not the computer's (virtual
            // time under a test runner, the demo's story time), in whole seconds as os.time does.
            let clock = options.clock
            pushFunction("virtual_now") { call in
                call.stack.push(Int64(clock.now().timeIntervalSince1970.rounded(.down)))
                return .values(1)
            }
            s.setField("virtual_now", in: -2)
        }
        lua_pushcclosure(L, shim_open_coroutines, 0)
        s.setField("open_coroutines", in: -2)
        lua_pushcclosure(L, shim_open_print, 0)
        s.setField("open_print", in: -2)
        if trusted {
            lua_pushcclosure(L, shim_open_debughooks, 0)
            s.setField("open_debug_hooks", in: -2)
        }
        s.push(options.trusted)
        s.setField("trusted", in: -2)
        s.push(ModuleSearch.path(for: scriptDirectory))
        s.setField("search_path", in: -2)
    }

    /// The message of the error that unwinds a script calling `script.exit` / `os.exit`.
    static let exitMessage = "script exit"

    /// Adds a module to `package.preload` under its name and `lookout.<name>`; sets the global
    /// when it is a convenience and conveniences are on.
    public func register(module: any LuaModule) throws {
        withMemoryOverdraft {
            stubs[module.name] = module.stub
            if !moduleNames.contains(module.name) { moduleNames.append(module.name) }
            let s = LuaStack(L)
            s.rawField(LUA_PRELOAD_TABLE, of: SHIM_REGISTRYINDEX)
            pushFunction("require") { call in
                // One instance under both names: reuse what the other name already loaded.
                call.stack.rawField(LUA_LOADED_TABLE, of: SHIM_REGISTRYINDEX)
                for name in [module.name, "lookout." + module.name] {
                    if call.stack.rawField(name, of: -1) != .nil {
                        shim_remove(call.L, -2)
                        return .values(1)
                    }
                    call.stack.pop()
                }
                call.stack.pop()
                try module.push(into: call.engine, stack: call.stack)
                return .values(1)
            }
            s.pushCopy(of: -1)
            s.setField("lookout." + module.name, in: -3)
            s.setField(module.name, in: -2)
            s.pop()
        }
        if module.isGlobal && options.conveniences {
            try require(module.name, asGlobal: true)
        }
    }

    /// `require(name)`, also setting `_G[name]` when `asGlobal`.
    func require(_ name: String, asGlobal: Bool) throws {
        try withMemoryOverdraft {
            let s = LuaStack(L)
            // Raw: runs while the state is set up, and no metamethod of `_G` may run from Swift.
            s.rawGlobal("require")
            s.push(name)
            guard shim_pcall_traceback(L, 1, 1) == LUA_OK else {
                defer { s.pop() }
                throw LuaRaise("loading \(name): \(s.string(at: -1) ?? "?")")
            }
            if asGlobal { s.setGlobal(name) } else { s.pop() }
        }
    }
}

extension LuaCall {
    /// Pushes values (nil pushes nil) and returns them.
    func returning(contentsOf values: [LuaValue]) -> LuaReturn {
        for v in values { stack.push(v) }
        return .values(Int32(values.count))
    }
}

extension LuaEngine {
    /// `sleep = require("script").sleep`.
    func setSleepGlobal() throws {
        try require("script", asGlobal: true)
        withMemoryOverdraft {
            let s = LuaStack(L)
            s.rawGlobal("script")
            s.rawField("sleep", of: -1)
            s.setGlobal("sleep")
            shim_pop(L, 1)
            lua_pushnil(L)
            s.setGlobal("script")  // `script` stays a module, not a global
        }
    }

    /// The global `arg`: `arg[0]` is the script, `arg[1…]` its arguments.
    func setArguments(_ arguments: [String]) {
        withMemoryOverdraft {
            let s = LuaStack(L)
            s.pushTable(array: arguments.count, fields: 1)
            for (i, argument) in arguments.enumerated() {
                s.push(argument)
                s.setIndex(i, in: -2)
            }
            s.setGlobal("arg")
        }
    }

    /// Compiles a chunk and starts it as a task. Returns the syntax error, if any.
    public func spawnChunk(source: [UInt8], chunkName: String, label: String, arguments: [LuaValue] = []) -> String? {
        withMemoryOverdraft {
            let status = source.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    shim_loadtext(L, chars.baseAddress, chars.count, chunkName)
                }
            }
            guard status == LUA_OK else {
                let message = LuaStack(L).string(at: -1) ?? "cannot load \(chunkName)"
                shim_pop(L, 1)
                return message
            }
            spawn(label: label) { stack in
                guard stack.ensure(Int32(clamping: arguments.count + 1)) else {
                    shim_pop(L, 1)
                    return nil
                }
                lua_xmove(L, stack.L, 1)
                for argument in arguments { stack.push(argument) }
                return Int32(arguments.count)
            }
            return nil
        }
    }
}

/// A Lua module bundled in the binary, as text that lives as long as the process.
final class BundledChunk: @unchecked Sendable {
    // @unchecked Sendable: `text` is written once in init, never changed or freed, and only read.
    let name: String
    let text: UnsafeBufferPointer<CChar>

    private init(_ name: String, _ bytes: [UInt8]) {
        self.name = name
        let copy = UnsafeMutableBufferPointer<CChar>.allocate(capacity: bytes.count)
        _ = copy.initialize(from: bytes.lazy.map { CChar(bitPattern: $0) })
        text = UnsafeBufferPointer(copy)
    }

    /// The REPL's support and the help system.
    static let all = [
        BundledChunk("lookout._repl", PackageResources.repl_lua),
        BundledChunk("lookout._docs", PackageResources.docs_lua),
        BundledChunk("lookout._docs.text", PackageResources.docs_text_lua),
        BundledChunk("lookout._docs.stubs", PackageResources.docs_stubs_lua),
        BundledChunk("lookout._docs.stdlib", PackageResources.docs_stdlib_lua),
        BundledChunk("lookout._docs.render", PackageResources.docs_render_lua),
        BundledChunk("lookout._docs.names", PackageResources.docs_names_lua),
    ]
}
