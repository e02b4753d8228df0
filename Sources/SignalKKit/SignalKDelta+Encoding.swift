import Foundation
import LookoutWire

extension SignalKSource {
    /// The source object as sent on the wire (members that are set, plus ``extra``).
    public var jsonValue: JSONValue {
        var o = extra
        if let label { o["label"] = .string(label) }
        if let type { o["type"] = .string(type) }
        if let src { o["src"] = .string(src) }
        if let pgn { o["pgn"] = .int(Int64(pgn)) }
        if let canName { o["canName"] = .string(canName) }
        if let instance { o["instance"] = .string(instance) }
        if let sentence { o["sentence"] = .string(sentence) }
        if let talker { o["talker"] = .string(talker) }
        return .object(o)
    }
}

extension SignalKUpdate {
    /// The update as sent on the wire: `source`/`$source`, `timestamp` (RFC 3339 with milliseconds),
    /// `values` and `meta` when not empty.
    public var jsonValue: JSONValue {
        var o: [String: JSONValue] = [:]
        if let source { o["source"] = source.jsonValue }
        if let dollarSource { o["$source"] = .string(dollarSource) }
        if let timestamp { o["timestamp"] = .string(SignalKTimestamp.format(timestamp)) }
        if !values.isEmpty { o["values"] = .array(values.map { .object(["path": .string($0.path), "value": $0.value]) }) }
        if !meta.isEmpty { o["meta"] = .array(meta.map { .object(["path": .string($0.path), "value": $0.value]) }) }
        return .object(o)
    }
}

extension SignalKDelta {
    /// The delta as a client sends it (`{context?, updates}`); ``SignalKDelta/parse(_:)-(String)`` reads it back.
    public var jsonValue: JSONValue {
        var o: [String: JSONValue] = ["updates": .array(updates.map(\.jsonValue))]
        if let context { o["context"] = .string(context) }
        return .object(o)
    }
}
