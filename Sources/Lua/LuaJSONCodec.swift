import CLua
import LuaShim

/// The C JSON codec of LuaShim (`json.c`, the one behind `json.encode`/`json.decode`) used from
/// Swift bindings, so values the host stores or sends have exactly the representation scripts
/// get from `json.encode` (exact int64, shortest round-tripping floats, `json.null`,
/// `json.empty_array`, `json.array_mt`).
///
/// The codec functions are kept in a private registry table, so a script that replaces
/// `json.encode` does not change what the host writes. Used by host modules (`http`, `store`).
public enum LuaJSONCodec {
    /// Registry key of the host's private `{encode = …, decode = …}` table.
    static let registryKey = "lookout.host.json_codec"

    /// Encodes the value at `index` of `stack`.
    ///
    /// `stack` must be a thread that may call functions: the running task inside a binding, or
    /// the main thread of the state outside of any resume (never a suspended task).
    /// - Throws: the encoder's message without its `json.encode: ` prefix, e.g.
    ///   `cannot encode function at $.a`.
    public static func encode(_ stack: LuaStack, at index: Int32) throws(LuaJSONError) -> [UInt8] {
        let L = stack.L
        let value = lua_absindex(L, index)
        guard stack.ensure(4) else { throw LuaJSONError(message: "stack overflow") }
        try pushCodecFunction("encode", on: stack)
        lua_pushvalue(L, value)
        guard shim_pcall_traceback(L, 1, 1) == LUA_OK else {
            throw LuaJSONError(message: popMessage(stack, prefix: "json.encode: "))
        }
        defer { stack.pop() }
        return stack.bytes(at: -1) ?? []
    }

    /// Decodes `bytes` and pushes the value onto `target`; `worker` runs the decoder (it must be
    /// a thread that may call functions, see `encode`; it may be `target` itself). Nothing is
    /// pushed when decoding fails.
    /// - Throws: the decoder's message without its `json.decode: ` prefix, e.g.
    ///   `unexpected character 'x' at byte 17`.
    public static func decode(_ bytes: [UInt8], onto target: LuaStack, worker: LuaStack) throws(LuaJSONError) {
        guard worker.ensure(4) else { throw LuaJSONError(message: "stack overflow") }
        try pushCodecFunction("decode", on: worker)
        worker.push(bytes: bytes)
        guard shim_pcall_traceback(worker.L, 1, 1) == LUA_OK else {
            throw LuaJSONError(message: popMessage(worker, prefix: "json.decode: "))
        }
        if worker.L != target.L {
            guard target.ensure(2) else {
                worker.pop()
                throw LuaJSONError(message: "stack overflow")
            }
            lua_xmove(worker.L, target.L, 1)
        }
    }

    /// Pushes `encode` or `decode` from the private codec table, opening the codec once per state.
    private static func pushCodecFunction(_ name: String, on stack: LuaStack) throws(LuaJSONError) {
        let L = stack.L
        if stack.rawField(registryKey, of: SHIM_REGISTRYINDEX) != .table {
            stack.pop()
            lua_pushcclosure(L, luaopen_lookout_json, 0)
            guard shim_pcall_traceback(L, 0, 1) == LUA_OK else {
                throw LuaJSONError(message: "cannot open the JSON codec: " + popMessage(stack, prefix: ""))
            }
            lua_pushvalue(L, -1)
            stack.setField(registryKey, in: SHIM_REGISTRYINDEX)
        }
        stack.rawField(name, of: -1)
        shim_remove(L, -2)
    }

    /// Pops the error text on top, without the traceback and without `prefix`.
    private static func popMessage(_ stack: LuaStack, prefix: String) -> String {
        var text = stack.string(at: -1) ?? "unknown error"
        stack.pop()
        if let range = text.range(of: "\nstack traceback:") { text = String(text[..<range.lowerBound]) }
        if text.hasPrefix(prefix) { text.removeFirst(prefix.count) }
        return text
    }
}

/// The C JSON codec refused a value or a text; `message` says what and where (`$.a[2]`, byte 17).
public struct LuaJSONError: Error, CustomStringConvertible {
    /// What is wrong, e.g. `cannot encode function at $.a`.
    public var message: String
    public var description: String { message }
}
