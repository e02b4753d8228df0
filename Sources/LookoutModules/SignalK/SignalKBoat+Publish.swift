import Foundation
import Lua
import SignalKKit

/// `boat:send_delta{…}` and `boat:unsubscribe(…)`.
extension SignalKLuaBoat {
    static let sendDeltaKeys: Set<String> = ["path", "value", "values", "context", "source", "timestamp"]

    /// The methods that change what the stream carries or publish on it.
    static var publishMethods: [String: LuaBinding] { [
        "send_delta": { call in
            let boat = try boat(call)
            let delta = try sendDelta(try call.options(1), call: call)
            if let recorded = SideEffectRecorder.delta(call, boat: boat.label, delta) { return recorded }
            let stream = boat.stream
            return try wait(call, "signalk send_delta", {
                guard await stream.publish(delta) else {
                    throw LuaErrorInfo(code: "network", message: "not connected: the delta was not sent (send it again once connected)",
                                       retryable: true, service: "signalk")
                }
                return true
            }) { stack, ok in
                stack.push(ok)
                return 1
            }
        },
        "unsubscribe": { call in
            let boat = try boat(call)
            let (paths, context) = try unsubscribeArguments(call)
            let stream = boat.stream
            return try wait(call, "signalk unsubscribe", {
                if let paths { await stream.unsubscribe(paths: paths, context: context) } else { await stream.unsubscribeAll() }
                return true
            }) { stack, ok in
                stack.push(ok)
                return 1
            }
        },
    ] }

    /// `{path=, value=}` or `{values={{path=, value=}, …} | {[path]=value, …}}`, with optional
    /// `context`, `source` (becomes `$source`) and `timestamp` (epoch ms or ISO-8601; default now).
    static func sendDelta(_ opts: [String: LuaValue], call: LuaCall) throws(LuaRaise) -> SignalKDelta {
        if let unknown = opts.keys.sorted().first(where: { !sendDeltaKeys.contains($0) }) {
            throw call.argumentError(1, "unknown option '\(unknown)' (known: \(sendDeltaKeys.sorted().joined(separator: ", ")))")
        }
        var entries: [(String, LuaValue)] = []
        switch (opts["path"], opts["values"]) {
        case (let path?, nil):
            guard let p = path.text, !p.isEmpty else { throw call.argumentError(1, "opts.path: expected a non-empty string") }
            guard let v = opts["value"] else { throw call.argumentError(1, "opts.value: required (json.null clears a value)") }
            entries = [(p, v)]
        case (nil, .array(let list)?):
            for (i, item) in list.enumerated() {
                guard case .object(let o) = item, let p = o["path"]?.text, !p.isEmpty else {
                    throw call.argumentError(1, "opts.values[\(i + 1)]: expected {path = \"…\", value = …}")
                }
                guard let v = o["value"] else { throw call.argumentError(1, "opts.values[\(i + 1)].value: required (json.null clears a value)") }
                entries.append((p, v))
            }
        case (nil, .object(let map)?):
            entries = map.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        case (nil, _?):
            throw call.argumentError(1, "opts.values: expected a list of {path, value} or a table of path = value")
        case (nil, nil):
            throw call.argumentError(1, "expected opts.path and opts.value, or opts.values")
        case (_?, _?):
            throw call.argumentError(1, "give either opts.path or opts.values, not both")
        }
        guard !entries.isEmpty else { throw call.argumentError(1, "opts.values: expected at least one value") }
        var values: [SignalKPathValue] = []
        for (path, value) in entries {
            do { values.append(SignalKPathValue(path: path, value: try SignalKLuaValues.skValue(value, path: path))) } catch {
                throw call.argumentError(1, error.description)
            }
        }
        let context = try text(opts["context"], "opts.context", call)
        let source = try text(opts["source"], "opts.source", call)
        let time = try NightscoutTimeArgument.optionalDate(opts["timestamp"], what: "opts.timestamp") ?? call.engine.clock.now()
        return SignalKDelta(context: context, updates: [SignalKUpdate(dollarSource: source, timestamp: time, values: values)])
    }

    /// `()` / `"*"`: everything; `"path"`, `{"a", "b"}` or `{"a", context = "vessels.*"}`: those rows.
    static func unsubscribeArguments(_ call: LuaCall) throws(LuaRaise) -> ([String]?, String) {
        let value = try call.value(1, name: "paths")
        switch value {
        case .nil: return (nil, SignalKContext.selfAlias)
        case .string:
            guard let p = value.text else { throw call.argumentError(1, "paths: expected a UTF-8 string") }
            return p == "*" ? (nil, SignalKContext.selfAlias) : ([p], SignalKContext.selfAlias)
        case .array(let items):
            return (try items.enumerated().map { (i, v) throws(LuaRaise) in
                guard let p = v.text else { throw call.argumentError(1, "paths[\(i + 1)]: expected a string") }
                return p
            }, SignalKContext.selfAlias)
        case .object(let o):
            var context = SignalKContext.selfAlias
            var numbered: [(Int, String)] = []
            for (key, v) in o {
                if key == "context" {
                    guard let c = v.text else { throw call.argumentError(1, "paths.context: expected a string") }
                    context = c
                } else if let i = Int(key), let p = v.text {
                    numbered.append((i, p))
                } else {
                    throw call.argumentError(1, "paths: unknown key '\(key)' (a list of paths and context)")
                }
            }
            return (numbered.sorted { $0.0 < $1.0 }.map(\.1), context)
        default:
            throw call.argumentError(1, "paths: expected a path, a list of paths, or nothing for all, got \(value.typeName)")
        }
    }

    private static func text(_ v: LuaValue?, _ what: String, _ call: LuaCall) throws(LuaRaise) -> String? {
        guard let v, v != .nil else { return nil }
        guard let t = v.text, !t.isEmpty else { throw call.argumentError(1, "\(what): expected a non-empty string") }
        return t
    }
}
