import CLua
import LuaShim

/// The type of a value on the Lua stack, as bindings see it (`LUA_T*` without the C API).
public enum LuaType: Int32, Sendable {
    /// An index past the top of the stack (an argument that was not passed).
    case none = -1
    /// `nil`.
    case `nil` = 0
    /// `true` or `false`.
    case boolean = 1
    /// A light userdata; the host uses the NULL one as `json.null`.
    case lightUserdata = 2
    /// An integer or a float.
    case number = 3
    /// A string.
    case string = 4
    /// A table.
    case table = 5
    /// A Lua or C function.
    case function = 6
    /// A full userdata (host objects).
    case userdata = 7
    /// A coroutine.
    case thread = 8
}

// Raw table access, stack shuffling and loading host chunks: what the per-service bindings need,
// so that only the `Lua` target touches the C API. Every function here is one that cannot raise
// (raw access, pushes, stack moves) or runs Lua code in protected mode.
extension LuaStack {
    /// The type of the value at `index`.
    public func kind(at index: Int32) -> LuaType { LuaType(rawValue: lua_type(L, index)) ?? .none }

    /// The pseudo-index of the registry (for `rawField(_:of:)` on host keys).
    public static let registry: Int32 = SHIM_REGISTRYINDEX

    /// `index` made absolute (it stays valid while values are pushed and popped above it).
    public func absolute(_ index: Int32) -> Int32 { lua_absindex(L, index) }

    /// The raw length (`#t` without `__len`) of the table or string at `index`.
    public func rawLength(at index: Int32) -> Int { Int(lua_rawlen(L, index)) }

    /// Pushes `t[i]` (raw) for the table at `table`; returns its type.
    @discardableResult
    public func rawIndex(_ i: Int, of table: Int32) -> LuaType {
        LuaType(rawValue: lua_rawgeti(L, table, lua_Integer(i))) ?? .nil
    }

    /// Pushes `t[k]` (raw), where the key `k` is on top (it is replaced by the value); returns its type.
    @discardableResult
    public func rawGet(in table: Int32) -> LuaType { LuaType(rawValue: lua_rawget(L, table)) ?? .nil }

    /// Iterates the table at `table` (raw `next`): pops a key and pushes the next key and value,
    /// or pushes nothing and returns false at the end. Start with `pushNil()`.
    public func next(in table: Int32) -> Bool { lua_next(L, table) != 0 }

    /// Pops a table (or nil) and sets it as the metatable of the table at `index`.
    public func setMetatable(of index: Int32) { lua_setmetatable(L, index) }

    /// Removes the value at `index`, shifting the ones above it down.
    public func remove(at index: Int32) { shim_remove(L, index) }

    /// Moves the top value to `index`, shifting the ones above it up.
    public func insert(at index: Int32) { lua_rotate(L, index, 1) }

    /// The truth of the value at `index` (false only for nil and false).
    public func boolean(at index: Int32) -> Bool { lua_toboolean(L, index) != 0 }

    /// Pushes `json.null` (the NULL light userdata).
    public func pushNull() { lua_pushlightuserdata(L, nil) }

    /// Loads `source` as a chunk named `name` (text only, in the state's sandbox environment) and
    /// pushes the function; on a syntax error pushes nothing and throws "`what`: message".
    public func load(_ source: [UInt8], name: String, what: String) throws(LuaRaise) {
        let status = source.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { shim_loadtext(L, $0.baseAddress, $0.count, name) }
        }
        guard status == LUA_OK else {
            let message = string(at: -1) ?? "cannot load"
            pop()
            throw LuaRaise("\(what): \(message)")
        }
    }

    /// Calls the function below the top `arguments` values in protected mode, leaving `results`
    /// values; on an error pushes nothing and throws "`what`: message" (with a traceback).
    public func protectedCall(arguments: Int32, results: Int32, what: String) throws(LuaRaise) {
        guard shim_pcall_traceback(L, arguments, results) == LUA_OK else {
            let message = string(at: -1) ?? "error"
            pop()
            throw LuaRaise("\(what): \(message)")
        }
    }
}
