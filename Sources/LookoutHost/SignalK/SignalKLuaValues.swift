import CLua
import Foundation
import Lua
import LuaShim
import SignalKKit
import LookoutWire

/// Signal K values in Lua and back, and how SignalKKit failures look to scripts.
///
/// JSONValue → Lua: numbers stay integers or floats as on the wire, objects become tables, arrays
/// become tables carrying `json.array_mt`, and JSON `null` becomes `json.null`. Values are pushed
/// straight onto the stack (no intermediate `LuaValue`), because the delta loop is hot.
enum SignalKLuaValues {
    /// Pushes `value` onto `L`.
    static func push(_ value: JSONValue, on L: OpaquePointer) {
        switch value {
        case .null: lua_pushlightuserdata(L, nil)
        case .bool(let b): lua_pushboolean(L, b ? 1 : 0)
        case .int(let i): lua_pushinteger(L, lua_Integer(i))
        case .double(let d): lua_pushnumber(L, d)
        case .string(let s): LuaStack(L).push(s)
        case .array(let items):
            // The caller left room for this value: when nested values do not fit, it becomes nil.
            guard lua_checkstack(L, 3) != 0 else { return lua_pushnil(L) }
            lua_createtable(L, Int32(clamping: items.count), 0)
            for (i, item) in items.enumerated() {
                push(item, on: L)
                lua_rawseti(L, -2, lua_Integer(i + 1))
            }
            if LuaStack(L).rawField(LuaStack.arrayMetatableKey, of: SHIM_REGISTRYINDEX) == LUA_TTABLE {
                lua_setmetatable(L, -2)
            } else {
                shim_pop(L, 1)
            }
        case .object(let fields):
            // The caller left room for this value: when nested values do not fit, it becomes nil.
            guard lua_checkstack(L, 3) != 0 else { return lua_pushnil(L) }
            lua_createtable(L, 0, Int32(clamping: fields.count))
            let stack = LuaStack(L)
            for (key, item) in fields {
                push(item, on: L)
                stack.setField(key, in: -2)
            }
        }
    }

    /// A value from a script (`boat:put`) as JSON; `nil`/`json.null` are `null`. Functions and
    /// strings that are not UTF-8 cannot be sent.
    static func skValue(_ value: LuaValue, path: String = "value") throws(LuaConversionError) -> JSONValue {
        switch value {
        case .nil, .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(Int64(i))
        case .double(let d): return .double(d)
        case .string(let s):
            guard let text = s.text else { throw LuaConversionError(path: path, message: "the string is not valid UTF-8") }
            return .string(text)
        case .array(let items):
            var out: [JSONValue] = []
            out.reserveCapacity(items.count)
            for (i, item) in items.enumerated() { out.append(try skValue(item, path: "\(path)[\(i + 1)]")) }
            return .array(out)
        case .object(let fields):
            var out: [String: JSONValue] = [:]
            for (key, item) in fields { out[key] = try skValue(item, path: "\(path).\(key)") }
            return .object(out)
        case .function:
            throw LuaConversionError(path: path, message: "cannot send a function to a Signal K server")
        }
    }

    /// A REST leaf (`{"value": …, "timestamp": …, "$source": …}`) reduced to its value; anything
    /// else (a branch of the tree) is returned whole.
    static func leafValue(_ value: JSONValue) -> JSONValue {
        if case .object(let o) = value, let v = o["value"], o["timestamp"] != nil || o["$source"] != nil {
            return v
        }
        return value
    }
}

extension LuaErrorInfo {
    /// How scripts see a SignalKKit failure: `err.service == "signalk"` and a code: `http`
    /// (`err.status`), `auth`, `request_failed` (a PUT the server or device refused; `err.status`
    /// is the reply's status code, `err.state` its state), `timeout`, `network`,
    /// `invalid_response`, `invalid`, `closed`, `access` or `discovery`.
    static func signalk(_ error: any Error) -> LuaErrorInfo {
        if var info = error as? LuaErrorInfo {
            info.service = info.service ?? "signalk"
            return info
        }
        guard let error = error as? SignalKClientError else {
            if error is CancellationError { return LuaErrorInfo(code: "cancelled", message: "cancelled", service: "signalk") }
            if error is MDNSError { return LuaErrorInfo(code: "discovery", message: String(describing: error), service: "signalk") }
            var info = LuaErrorInfo(error)
            info.service = "signalk"
            return info
        }
        let message = error.description
        switch error {
        case .http(let status, _, _, _):
            return LuaErrorInfo(code: "http", message: message, retryable: status >= 500 || status == 429, status: status, service: "signalk")
        case .unauthorized(let status, _):
            return LuaErrorInfo(code: "auth", message: message, status: status, service: "signalk")
        case .requestFailed(let state, let statusCode, _):
            var details: [String: LuaValue] = [:]
            if let state { details["state"] = .text(state) }
            return LuaErrorInfo(code: "request_failed", message: message, retryable: statusCode == 502 || statusCode == 504,
                                status: statusCode, service: "signalk", details: details)
        case .timeout:
            return LuaErrorInfo(code: "timeout", message: message, retryable: true, service: "signalk")
        case .transport:
            return LuaErrorInfo(code: "network", message: message, retryable: true, service: "signalk")
        case .invalidResponse:
            return LuaErrorInfo(code: "invalid_response", message: message, service: "signalk")
        case .invalidURL:
            return LuaErrorInfo(code: "invalid", message: message, service: "signalk")
        case .closed:
            return LuaErrorInfo(code: "closed", message: message, service: "signalk")
        case .accessRequestsUnavailable, .accessDenied, .accessRequestsRefused:
            return LuaErrorInfo(code: "access", message: message, service: "signalk")
        }
    }
}
