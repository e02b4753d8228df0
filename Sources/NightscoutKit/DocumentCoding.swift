import Foundation
import LookoutWire

/// Reads a JSON object field by field, remembering which keys were consumed so the rest can be
/// kept in a model's `extra` dictionary. Numbers are read leniently (numeric strings accepted),
/// because v1 stores values as sent.
struct DocumentReader {
    private typealias Object = [String: JSONValue]

    /// The fields when the decoder is a `JSONValueDecoder` over an object (the fast path:
    /// consumed fields are remembered by dictionary index, so no key is hashed twice).
    private let object: Object
    /// Whether `object` holds the fields (else `container` does).
    private let fast: Bool
    /// Any other decoder's keyed container.
    private let container: KeyedDecodingContainer<AnyCodingKey>?
    /// Consumed keys (container path).
    private(set) var used: Set<String> = []
    /// Indices of consumed fields in `object` (fast path), without repeats.
    private var usedIndices: [Object.Index] = []
    /// The index of the field `raw`/`value` found last (fast path), for `markUsed`.
    private var lastIndex: Object.Index?

    init(_ decoder: any Decoder) throws {
        if let d = decoder as? JSONValueDecoder, case .object(let object) = d.value {
            self.object = object
            self.fast = true
            self.container = nil
            usedIndices.reserveCapacity(object.count)
        } else {
            self.object = [:]
            self.fast = false
            self.container = try decoder.container(keyedBy: AnyCodingKey.self)
        }
    }

    private func key(_ name: String) -> AnyCodingKey { AnyCodingKey(name) }

    mutating func has(_ name: String) -> Bool {
        if fast { return object.index(forKey: name) != nil }
        return container!.contains(key(name))
    }

    /// Marks `name` consumed; on the fast path it must be the field `raw`/`value` just found.
    private mutating func markUsed(_ name: String) {
        if fast {
            if let i = lastIndex, !usedIndices.contains(i) { usedIndices.append(i) }
        } else {
            used.insert(name)
        }
    }

    /// Readers never consume a JSON `null`: it stays in `extra` and is re-emitted unless the
    /// field is set, so a read-modify-write keeps the document as it was.
    ///
    /// Decodes an optional value of any `Decodable` type; JSON `null` is `nil`. A value of the
    /// wrong shape is not an error: it is left unconsumed (so it stays in `extra` verbatim) and
    /// `nil` is returned. One odd document from some uploader must not fail a whole fetch.
    mutating func value<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T? {
        let decoded: T?
        if fast {
            guard let v = raw(name) else { return nil }
            decoded = try? JSONValueDecoder.decode(T.self, from: v)
        } else {
            decoded = (try? container!.decodeIfPresent(T.self, forKey: key(name))) ?? nil
        }
        guard let v = decoded else { return nil }
        markUsed(name)
        return v
    }

    /// The field's value, `nil` when absent or JSON `null`.
    private mutating func raw(_ name: String) -> JSONValue? {
        if fast {
            guard let i = object.index(forKey: name) else { return nil }
            let v = object[i].value
            if case .null = v { return nil }
            lastIndex = i
            return v
        }
        return (try? container!.decodeIfPresent(JSONValue.self, forKey: key(name))) ?? nil
    }

    /// Decodes a string; numbers and booleans are converted to their text. Arrays and objects
    /// are left in `extra`.
    mutating func string(_ name: String) throws -> String? {
        guard let r = raw(name), let result = DocumentReader.string(r) else { return nil }
        markUsed(name)
        return result
    }

    /// Decodes a number, accepting numeric strings; empty strings and `null` are `nil`.
    /// Non-numeric values are left in `extra`.
    mutating func double(_ name: String) throws -> Double? {
        guard let r = raw(name), let d = DocumentReader.double(r) else { return nil }
        markUsed(name)
        return d
    }

    /// Decodes an integer, accepting numeric strings; non-integral values are left in `extra`.
    mutating func int(_ name: String) throws -> Int? {
        guard let r = raw(name), let i = DocumentReader.int(r) else { return nil }
        markUsed(name)
        return i
    }

    /// Decodes a boolean, accepting `"true"`/`"false"` strings and 0/1; anything else is left in
    /// `extra`.
    mutating func bool(_ name: String) throws -> Bool? {
        guard let r = raw(name), let b = DocumentReader.bool(r) else { return nil }
        markUsed(name)
        return b
    }

    // MARK: One field's value (shared with the single-pass decoders, `DocumentScanner`)

    /// A string field's value: strings as they are, numbers and booleans as their text; `nil`
    /// (the field stays in `extra`) for `null`, arrays and objects.
    static func string(_ v: JSONValue) -> String? {
        switch v {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return String(b)
        case .null, .array, .object: return nil
        }
    }

    /// A number field's value: numbers and numeric strings, finite; `nil` for `null`, blank
    /// strings and anything else.
    static func double(_ v: JSONValue) -> Double? {
        switch v {
        case .int(let i): return Double(i)
        case .double(let d): return d.isFinite ? d : nil
        case .string(let s):
            if s.trimmingCharacters(in: .whitespaces).isEmpty { return nil }
            guard let d = v.lenientDoubleValue, d.isFinite else { return nil }
            return d
        case .null, .bool, .array, .object: return nil
        }
    }

    /// An integer field's value: integral numbers (and numeric strings) below 9e15, read as a
    /// `Double` first as JavaScript reads them.
    static func int(_ v: JSONValue) -> Int? {
        if case .null = v { return nil }
        guard let d = v.lenientDoubleValue, d.isFinite, d == d.rounded(), abs(d) < 9e15 else { return nil }
        return Int(d)
    }

    /// A boolean field's value: booleans, `"true"`/`"false"`, 0 and 1.
    static func bool(_ v: JSONValue) -> Bool? {
        switch v {
        case .bool(let b): return b
        case .string("true"): return true
        case .string("false"): return false
        case .int(0): return false
        case .int(1): return true
        default: return nil
        }
    }

    /// Every key not consumed so far, as JSON values.
    func extras() throws -> [String: JSONValue] {
        if fast {
            if usedIndices.isEmpty { return object }
            if usedIndices.count == object.count { return [:] }
            var out = Object(minimumCapacity: object.count - usedIndices.count)
            for i in object.indices where !usedIndices.contains(i) { out[object[i].key] = object[i].value }
            return out
        }
        var out: [String: JSONValue] = [:]
        for k in container!.allKeys where !used.contains(k.stringValue) {
            out[k.stringValue] = try container!.decode(JSONValue.self, forKey: k)
        }
        return out
    }
}

/// Writes a JSON object field by field; `nil` values are omitted. `finish(extra:)` re-emits
/// unknown fields without overwriting known ones.
struct DocumentWriter {
    var container: KeyedEncodingContainer<AnyCodingKey>
    private(set) var written: Set<String> = []

    init(_ encoder: any Encoder) {
        container = encoder.container(keyedBy: AnyCodingKey.self)
    }

    mutating func put<T: Encodable>(_ name: String, _ value: T?) throws {
        guard let value else { return }
        written.insert(name)
        try container.encode(value, forKey: AnyCodingKey(name))
    }

    /// Writes a number as an integer when it is integral (so `10.0` stays `10`).
    mutating func number(_ name: String, _ value: Double?) throws {
        guard let value else { return }
        if value.isFinite, value == value.rounded(), abs(value) < 9e15 {
            try put(name, Int64(value))
        } else {
            try put(name, value)
        }
    }

    mutating func finish(extra: [String: JSONValue]) throws {
        for (k, v) in extra where !written.contains(k) {
            try container.encode(v, forKey: AnyCodingKey(k))
        }
    }
}
