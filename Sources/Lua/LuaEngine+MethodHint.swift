import CLua
import LuaShim

extension LuaEngine {
    /// `text` (a failed task's error text) with "attempt to call a nil value (method 'lastest')"
    /// on a host object said plainly: "no method 'lastest' on nightscout client; did you mean
    /// 'latest'?". Other texts are returned unchanged. `co` is the dead coroutine, its stack as
    /// the error left it.
    func methodHint(in co: OpaquePointer, text: String) -> String {
        let prefix = "attempt to call a nil value (method '"
        guard let start = text.range(of: prefix),
              let end = text[start.upperBound...].range(of: "')"),
              !text[start.upperBound..<end.lowerBound].contains("\n")
        else { return text }
        let method = String(text[start.upperBound..<end.lowerBound])
        let stack = LuaStack(L)
        let top = lua_gettop(L)
        defer { lua_settop(L, top) }
        guard shim_nilmethod_metatable(L, co) == 1,
              stack.rawField("__name", of: -1) == .string, let typeName = stack.string(at: -1),
              let displayName = objectTypeNames[typeName]
        else { return text }
        stack.pop()
        var methods: [String] = []
        if stack.rawField("__index", of: -1) == .table {
            stack.pushNil()
            while stack.next(in: -2) {
                if stack.kind(at: -2) == .string, let name = stack.string(at: -2), !name.hasPrefix("_") { methods.append(name) }
                stack.pop()
            }
        }
        var plain = "no method '\(method)' on \(displayName)"
        if let guess = options.suggest(method, methods.sorted()) { plain += "; did you mean '\(guess)'?" }
        return text.replacingCharacters(in: start.lowerBound..<end.upperBound, with: plain)
    }
}
