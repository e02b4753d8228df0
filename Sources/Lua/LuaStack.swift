import CLua
import LuaShim

/// The value stack of one Lua thread, seen from Swift.
///
/// Only API functions that cannot raise are used here (raw access, pushes, type queries); pushes
/// may allocate, which is safe because the allocator never fails while the host runs
/// (`ShimBudget.host_critical`). Use it on the state's executor only.
public struct LuaStack {
    /// The Lua thread (`lua_State*`).
    public let L: OpaquePointer

    /// Wraps a Lua thread.
    public init(_ L: OpaquePointer) { self.L = L }

    /// Number of values on the stack.
    public var top: Int32 {
        get { lua_gettop(L) }
        nonmutating set { lua_settop(L, newValue) }
    }

    /// Pops `n` values.
    public func pop(_ n: Int32 = 1) { shim_pop(L, n) }

    /// The Lua type (`LUA_T*`) at `index`.
    public func type(at index: Int32) -> Int32 { lua_type(L, index) }

    /// The type name at `index`, with `__name` for host userdata.
    public func typeName(at index: Int32) -> String {
        let t = lua_type(L, index)
        if t == LUA_TUSERDATA, lua_getmetatable(L, index) != 0 {
            defer { pop() }
            lua_pushstring(L, "__name")
            lua_rawget(L, -2)
            defer { pop() }
            if lua_type(L, -1) == LUA_TSTRING { return string(at: -1) ?? "userdata" }
        }
        if t == LUA_TLIGHTUSERDATA, lua_touserdata(L, index) == nil { return "null" }
        return String(cString: lua_typename(L, t))
    }

    /// The generation of the state (kept in its extra space; threads inherit it).
    var generation: UInt64 { shim_getextraspace(L).load(as: UInt64.self) }

    /// Makes room for `n` more values; false when the stack cannot grow (then push nothing more).
    ///
    /// A binding starts with room for `LUA_MINSTACK` (20) values; whoever pushes more, or pushes
    /// onto another thread, asks here first and handles `false`.
    public func ensure(_ n: Int32) -> Bool { n <= 0 || lua_checkstack(L, n) != 0 }

    // MARK: Pushing

    /// Pushes nil.
    public func pushNil() { lua_pushnil(L) }
    /// Pushes a boolean.
    public func push(_ b: Bool) { lua_pushboolean(L, b ? 1 : 0) }
    /// Pushes an integer.
    @inlinable
    public func push(_ i: Int64) { lua_pushinteger(L, lua_Integer(i)) }
    /// Pushes an integer.
    public func push(_ i: Int) { lua_pushinteger(L, lua_Integer(i)) }
    /// Pushes a float.
    public func push(_ d: Double) { lua_pushnumber(L, d) }
    /// Pushes a string (UTF-8 bytes).
    public func push(_ s: String) {
        var s = s
        s.withUTF8 { buffer in
            _ = lua_pushlstring(L, buffer.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }, buffer.count)
        }
    }
    /// Pushes bytes as a Lua string.
    public func push(bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            _ = lua_pushlstring(L, buffer.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }, buffer.count)
        }
    }
    /// Pushes bytes as a Lua string.
    public func push(bytes: UnsafeRawBufferPointer) {
        _ = lua_pushlstring(L, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
    }

    /// Pushes the value at `index` again.
    public func pushCopy(of index: Int32) { lua_pushvalue(L, index) }

    /// Pushes a new table with room for the given number of entries.
    public func pushTable(array: Int = 0, fields: Int = 0) {
        lua_createtable(L, Int32(clamping: array), Int32(clamping: fields))
    }

    /// Sets `t[key] = top` (raw) and pops the value; `t` is at `table`.
    public func setField(_ key: String, in table: Int32) {
        let t = lua_absindex(L, table)
        push(key)
        lua_rotate(L, -2, 1)
        lua_rawset(L, t)
    }

    /// Sets `t[i] = top` (raw) and pops the value.
    public func setIndex(_ i: Int, in table: Int32) {
        lua_rawseti(L, table, lua_Integer(i))
    }

    /// Pushes the globals table (`_G`, read raw from the registry).
    public func pushGlobals() {
        lua_rawgeti(L, SHIM_REGISTRYINDEX, lua_Integer(LUA_RIDX_GLOBALS))
    }

    /// Sets the global `name` to the value on top (raw: a script's metatable on `_G` does not
    /// run) and pops the value.
    public func setGlobal(_ name: String) {
        pushGlobals()
        lua_rotate(L, -2, 1)  // globals, value
        setField(name, in: -2)
        pop()
    }

    /// Pushes the global `name` (raw); returns its type.
    @discardableResult
    public func rawGlobal(_ name: String) -> LuaType {
        pushGlobals()
        let type = rawField(name, of: -1)
        shim_remove(L, -2)
        return type
    }

    /// Pushes `t[key]` (raw).
    @discardableResult
    public func rawField(_ key: String, of table: Int32) -> LuaType {
        let t = lua_absindex(L, table)
        push(key)
        return LuaType(rawValue: lua_rawget(L, t)) ?? .nil
    }

    /// Pushes a value. Arrays get `json.array_mt` so they encode back as JSON arrays.
    ///
    /// Needs room for one value (a binding always has it); nested tables ask for their own room,
    /// and an entry that does not fit on the stack is left out rather than overflowing it.
    public func push(_ value: LuaValue) {
        if !pushNested(value) { lua_pushnil(L) }
    }

    /// Pushes `value`; false (nothing pushed) when the stack has no room for a table's entries.
    private func pushNested(_ value: LuaValue) -> Bool {
        switch value {
        case .nil: lua_pushnil(L)
        case .null: lua_pushlightuserdata(L, nil)
        case .bool(let b): push(b)
        case .int(let i): push(i)
        case .double(let d): push(d)
        case .string(let s): push(bytes: s.bytes)
        case .array(let items):
            guard ensure(3) else { return false }
            pushTable(array: items.count)
            for (i, item) in items.enumerated() where pushNested(item) {
                setIndex(i + 1, in: -2)
            }
            if rawField(LuaStack.arrayMetatableKey, of: SHIM_REGISTRYINDEX) == .table {
                lua_setmetatable(L, -2)
            } else {
                pop()
            }
        case .object(let fields):
            guard ensure(3) else { return false }
            pushTable(fields: fields.count)
            for (key, item) in fields where pushNested(item) {
                setField(key, in: -2)
            }
        case .function(let ref):
            lua_rawgeti(L, SHIM_REGISTRYINDEX, lua_Integer(ref.ref))
        }
        return true
    }

    /// Registry key of the metatable that marks a table as a JSON array (`json.array_mt`).
    public static let arrayMetatableKey = "lookout.array_mt"

    // MARK: Reading

    /// The string at `index` (only if it really is a string; numbers are not converted).
    public func string(at index: Int32) -> String? {
        guard lua_type(L, index) == LUA_TSTRING else { return nil }
        var length = 0
        guard let p = lua_tolstring(L, index, &length) else { return nil }
        let buffer = UnsafeRawBufferPointer(start: p, count: length)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// The bytes of the string at `index`.
    public func bytes(at index: Int32) -> [UInt8]? {
        guard lua_type(L, index) == LUA_TSTRING else { return nil }
        var length = 0
        guard let p = lua_tolstring(L, index, &length) else { return nil }
        return Array(UnsafeRawBufferPointer(start: p, count: length))
    }

    /// `tostring` of the value at `index` (runs `__tostring` in protected mode).
    public func text(of index: Int32) -> String {
        let i = lua_absindex(L, index)
        let status = shim_tostring(L, i)
        defer { pop() }
        let text = string(at: -1) ?? ""
        return status == LUA_OK ? text : "(error in __tostring: \(text))"
    }

    /// The integer at `index` (floats with an exact integer value included; strings are not).
    @inlinable
    public func integer(at index: Int32) -> Int64? {
        var v: lua_Integer = 0
        return shim_tointeger_strict(L, index, &v) != 0 ? Int64(v) : nil
    }

    /// The number at `index`.
    @inlinable
    public func number(at index: Int32) -> Double? {
        var d: lua_Number = 0
        return shim_tonumber_strict(L, index, &d) != 0 ? Double(d) : nil
    }

    /// Copies the value at `index` into Swift. Functions become registry references.
    /// - Parameter path: how the value is named in error messages (`opts.headers[3]`).
    public func value(at index: Int32, path: String = "value", depthLimit: Int = 100) throws(LuaConversionError) -> LuaValue {
        var seen: Set<UnsafeRawPointer> = []
        return try value(at: lua_absindex(L, index), path: path, depth: 0, limit: depthLimit, seen: &seen)
    }

    private func value(
        at index: Int32, path: String, depth: Int, limit: Int, seen: inout Set<UnsafeRawPointer>
    ) throws(LuaConversionError) -> LuaValue {
        switch lua_type(L, index) {
        case LUA_TNIL, LUA_TNONE: return .nil
        case LUA_TBOOLEAN: return .bool(lua_toboolean(L, index) != 0)
        case LUA_TNUMBER:
            if lua_isinteger(L, index) != 0 { return .int(Int64(lua_tointegerx(L, index, nil))) }
            return .double(lua_tonumberx(L, index, nil))
        case LUA_TSTRING: return .string(LuaString(bytes: bytes(at: index) ?? []))
        case LUA_TLIGHTUSERDATA where lua_touserdata(L, index) == nil: return .null
        case LUA_TFUNCTION:
            lua_pushvalue(L, index)
            let ref = luaL_ref(L, SHIM_REGISTRYINDEX)
            return .function(LuaRef(ref: ref, generation: generation))
        case LUA_TTABLE:
            return try table(at: index, path: path, depth: depth, limit: limit, seen: &seen)
        default:
            throw LuaConversionError(path: path, message: "cannot use a \(typeName(at: index)) value here")
        }
    }

    private func table(
        at index: Int32, path: String, depth: Int, limit: Int, seen: inout Set<UnsafeRawPointer>
    ) throws(LuaConversionError) -> LuaValue {
        guard depth < limit else {
            throw LuaConversionError(path: path, message: "nested deeper than \(limit) levels")
        }
        guard let pointer = lua_topointer(L, index) else { return .object([:]) }
        guard seen.insert(pointer).inserted else {
            throw LuaConversionError(path: path, message: "table contains itself (a cycle)")
        }
        defer { seen.remove(pointer) }
        guard ensure(4) else { throw LuaConversionError(path: path, message: "stack overflow") }

        let isMarkedArray = hasArrayMetatable(at: index)
        let length = Int(lua_rawlen(L, index))
        var count = 0
        var onlySequenceKeys = true
        lua_pushnil(L)
        while lua_next(L, index) != 0 {
            count += 1
            if onlySequenceKeys {
                var isInt: Int32 = 0
                let k = lua_tointegerx(L, -2, &isInt)
                if lua_type(L, -2) != LUA_TNUMBER || isInt == 0 || k < 1 || k > length { onlySequenceKeys = false }
            }
            pop()
        }
        if (isMarkedArray || (onlySequenceKeys && count == length)) && (count > 0 || isMarkedArray) {
            var items: [LuaValue] = []
            items.reserveCapacity(length)
            for i in 1...max(length, 1) where i <= length {
                lua_rawgeti(L, index, lua_Integer(i))
                defer { pop() }
                items.append(try value(at: lua_gettop(L), path: "\(path)[\(i)]", depth: depth + 1, limit: limit, seen: &seen))
            }
            return .array(items)
        }
        var fields: [String: LuaValue] = [:]
        fields.reserveCapacity(count)
        lua_pushnil(L)
        while lua_next(L, index) != 0 {
            let key: String
            switch lua_type(L, -2) {
            case LUA_TSTRING: key = string(at: -2) ?? ""
            case LUA_TNUMBER:
                // Never lua_tolstring a key inside lua_next: it would change the key in place.
                key = lua_isinteger(L, -2) != 0 ? String(lua_tointegerx(L, -2, nil)) : String(lua_tonumberx(L, -2, nil))
            default:
                let t = typeName(at: -2)
                pop(2)
                throw LuaConversionError(path: path, message: "table keys must be strings or numbers, found a \(t) key")
            }
            let child = LuaStack.childPath(path, key)
            do {
                fields[key] = try value(at: lua_gettop(L), path: child, depth: depth + 1, limit: limit, seen: &seen)
            } catch {
                pop(2)
                throw error
            }
            pop()
        }
        return .object(fields)
    }

    private func hasArrayMetatable(at index: Int32) -> Bool {
        guard lua_getmetatable(L, index) != 0 else { return false }
        rawField(LuaStack.arrayMetatableKey, of: SHIM_REGISTRYINDEX)
        let same = lua_rawequal(L, -1, -2) != 0
        pop(2)
        return same
    }

    /// `opts.key` for identifiers, `opts["odd key"]` otherwise.
    static func childPath(_ path: String, _ key: String) -> String {
        let bytes = Array(key.utf8)
        func isIdentifierByte(_ b: UInt8) -> Bool {
            b == UInt8(ascii: "_") || (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39)
        }
        let isIdentifier = !bytes.isEmpty && !(bytes[0] >= 0x30 && bytes[0] <= 0x39) && bytes.allSatisfy(isIdentifierByte)
        return isIdentifier ? "\(path).\(key)" : "\(path)[\(String(reflecting: key))]"
    }
}

/// A Lua value could not be converted; `path` names where (`opts.headers[3]`).
public struct LuaConversionError: Error, CustomStringConvertible, Sendable {
    /// Where in the argument the problem is.
    public var path: String
    /// What is wrong.
    public var message: String
    /// Creates an error.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
    public var description: String { "\(path): \(message)" }
}
