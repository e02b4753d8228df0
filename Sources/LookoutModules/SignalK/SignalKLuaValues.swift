import Foundation
import Lua
import SignalKKit
import LookoutWire

/// Signal K values in Lua and back, and how SignalKKit failures look to scripts.
///
/// JSONValue → Lua: numbers stay integers or floats as on the wire, objects become tables, arrays
/// become tables carrying `json.array_mt`, and JSON `null` becomes `json.null`. Values are pushed
/// straight onto the stack (no intermediate `LuaValue`), because the delta loop is hot.
enum SignalKLuaValues {
    /// Pushes `value` onto `stack`.
    static func push(_ value: JSONValue, on stack: LuaStack) {
        switch value {
        case .null: stack.pushNull()
        case .bool(let b): stack.push(b)
        case .int(let i): stack.push(Int64(i))
        case .double(let d): stack.push(d)
        case .string(let s): stack.push(s)
        case .array(let items):
            // The caller left room for this value: when nested values do not fit, it becomes nil.
            guard stack.ensure(3) else { return stack.pushNil() }
            stack.pushTable(array: items.count)
            for (i, item) in items.enumerated() {
                push(item, on: stack)
                stack.setIndex(i + 1, in: -2)
            }
            if stack.rawField(LuaStack.arrayMetatableKey, of: LuaStack.registry) == .table {
                stack.setMetatable(of: -2)
            } else {
                stack.pop()
            }
        case .object(let fields):
            // The caller left room for this value: when nested values do not fit, it becomes nil.
            guard stack.ensure(3) else { return stack.pushNil() }
            stack.pushTable(fields: fields.count)
            for (key, item) in fields {
                push(item, on: stack)
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
