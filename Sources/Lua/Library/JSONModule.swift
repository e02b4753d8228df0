import CLua
import LuaShim

/// `json`: the C codec in LuaShim (`json.c`). Loaded with every state, because the value bridge
/// marks arrays with its `array_mt`.
struct JSONModule: LuaModule {
    let name = "json"
    let isGlobal = true
    var stub: String { String(decoding: PackageResources.json_lua, as: UTF8.self) }

    func push(into engine: LuaEngine, stack: LuaStack) throws {
        lua_pushcclosure(stack.L, luaopen_lookout_json, 0)
        guard shim_pcall_traceback(stack.L, 0, 1) == LUA_OK else {
            defer { stack.pop() }
            throw LuaRaise("json: \(stack.string(at: -1) ?? "cannot load")")
        }
    }
}
