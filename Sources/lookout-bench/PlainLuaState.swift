import CLua

/// A bare `lua_State` (`luaL_newstate` + `luaL_openlibs`), outside Lookout's sandbox, used only to
/// load lua-cjson as an anchor: Lookout's own states cannot load C modules, by design.
///
/// Everything that can raise runs inside `lua_pcallk`, so no Lua error longjmps through Swift.
final class PlainLuaState {
    /// The state.
    let L: OpaquePointer

    /// A new state with the standard libraries, or nil when out of memory.
    init?() {
        guard let L = luaL_newstate() else { return nil }
        self.L = L
        luaL_openlibs(L)
    }

    deinit { lua_close(L) }

    /// Sets global `name` to a string holding `bytes`.
    func setGlobal(_ name: String, bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                _ = lua_pushlstring(L, chars.baseAddress, chars.count)
            }
        }
        lua_setglobal(L, name)
    }

    /// Runs a chunk and returns its results as numbers (non-numbers become nil).
    /// - Throws: `BenchFailure` with the Lua error message.
    func run(_ source: String, chunkName: String) throws -> [Double?] {
        let base = lua_gettop(L)
        var status = luaL_loadbufferx(L, source, source.utf8.count, chunkName, "t")
        if status == LUA_OK { status = lua_pcallk(L, 0, LUA_MULTRET, 0, 0, nil) }
        defer { lua_settop(L, base) }
        guard status == LUA_OK else {
            let message = lua_tolstring(L, -1, nil).map { String(cString: $0) } ?? "error \(status)"
            throw BenchFailure("\(chunkName): \(message)")
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
