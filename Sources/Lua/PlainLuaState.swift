import CLua

/// A bare `lua_State` (`luaL_newstate` + `luaL_openlibs`), outside Lookout's sandbox and limits:
/// lookout-bench uses it to load lua-cjson as an anchor (Lookout's own states cannot load C
/// modules, by design). Never give it to a script.
///
/// Everything that can raise runs inside `lua_pcallk`, so no Lua error longjmps through Swift.
public final class PlainLuaState {
    /// The state.
    public let L: OpaquePointer

    /// A new state with the standard libraries, or nil when out of memory.
    public init?() {
        guard let L = luaL_newstate() else { return nil }
        self.L = L
        luaL_openlibs(L)
    }

    deinit { lua_close(L) }

    /// Sets global `name` to a string holding `bytes`.
    public func setGlobal(_ name: String, bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                _ = lua_pushlstring(L, chars.baseAddress, chars.count)
            }
        }
        lua_setglobal(L, name)
    }

    /// Runs a chunk and returns its results as numbers (non-numbers become nil).
    /// - Throws: `LuaRaise` with the Lua error message.
    public func run(_ source: String, chunkName: String) throws -> [Double?] {
        let base = lua_gettop(L)
        var status = luaL_loadbufferx(L, source, source.utf8.count, chunkName, "t")
        if status == LUA_OK { status = lua_pcallk(L, 0, LUA_MULTRET, 0, 0, nil) }
        defer { lua_settop(L, base) }
        guard status == LUA_OK else {
            let message = lua_tolstring(L, -1, nil).map { String(cString: $0) } ?? "error \(status)"
            throw LuaRaise("\(chunkName): \(message)")
        }
        let top = lua_gettop(L)
        guard top > base else { return [] }
        return (base + 1 ... top).map { i -> Double? in
            var ok: Int32 = 0
            let v = lua_tonumberx(L, i, &ok)
            return ok != 0 ? v : nil
        }
    }
}

/// What benchmarks (lookout-bench P1) compare Lookout's bindings against.
public enum LuaBenchmarkAnchors {
    /// Pushes a plain `lua_CFunction` that returns the sum of its two integer arguments: the cost
    /// of a binding written in C.
    public static func pushCAdd(on stack: LuaStack) { lua_pushcclosure(stack.L, cAdd, 0) }

    /// Pushes the sum of the integers at 1 and 2 with the C API directly (no argument checks): a
    /// Swift binding's cost without `LuaCall`'s checked accessors.
    public static func pushRawSum(on stack: LuaStack) {
        lua_pushinteger(stack.L, lua_tointegerx(stack.L, 1, nil) &+ lua_tointegerx(stack.L, 2, nil))
    }
}

private func cAdd(_ L: OpaquePointer?) -> Int32 {
    lua_pushinteger(L, lua_tointegerx(L, 1, nil) &+ lua_tointegerx(L, 2, nil))
    return 1
}
