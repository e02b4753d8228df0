/// A JSON value with exact 64-bit integers, used to carry fields a model does not know
/// (`extra`) and free-form sub-documents (device status payloads, loop settings).
public enum JSONValue: Sendable, Hashable, Codable {
    /// JSON `null`.
    case null
    /// `true` / `false`.
    case bool(Bool)
    /// An integral number that fits in `Int64`, kept exactly.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Decodes any JSON value; integral numbers become `.int` (exact), others `.double`.
    public init(from decoder: any Decoder) throws {
        if let d = decoder as? JSONValueDecoder {
            self = d.value
            return
        }
        if var unkeyed = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !unkeyed.isAtEnd { items.append(try unkeyed.decode(JSONValue.self)) }
            self = .array(items)
            return
        }
        if let keyed = try? decoder.container(keyedBy: AnyCodingKey.self) {
            var object: [String: JSONValue] = [:]
            for key in keyed.allKeys { object[key.stringValue] = try keyed.decode(JSONValue.self, forKey: key) }
            self = .object(object)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null }
        else if let b = try? single.decode(Bool.self) { self = .bool(b) }
        else if let i = try? single.decode(Int64.self) { self = .int(i) }
        else if let d = try? single.decode(Double.self) { self = .double(d) }
        else if let s = try? single.decode(String.self) { self = .string(s) }
        else {
            throw DecodingError.dataCorruptedError(in: single, debugDescription: "Unsupported JSON value")
        }
    }

    /// Encodes the value back to JSON.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var c = encoder.singleValueContainer(); try c.encodeNil()
        case .bool(let b):
            var c = encoder.singleValueContainer(); try c.encode(b)
        case .int(let i):
            var c = encoder.singleValueContainer(); try c.encode(i)
        case .double(let d):
            var c = encoder.singleValueContainer(); try c.encode(d)
        case .string(let s):
            var c = encoder.singleValueContainer(); try c.encode(s)
        case .array(let items):
            var c = encoder.unkeyedContainer()
            for item in items { try c.encode(item) }
        case .object(let object):
            var c = encoder.container(keyedBy: AnyCodingKey.self)
            for (key, value) in object { try c.encode(value, forKey: AnyCodingKey(key)) }
        }
    }

    /// The value as a number (`.int` or `.double`, or a numeric string), else `nil`.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .string(let s): return Double(s.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    /// The value as a string when it is `.string`, else `nil`.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The value as an object when it is `.object`, else `nil`.
    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// Member lookup for objects (`nil` for other values or a missing key).
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }
}

import Foundation

/// A coding key for arbitrary string keys.
public struct AnyCodingKey: CodingKey, Hashable, Sendable {
    /// The key.
    public var stringValue: String
    /// Integer form (array indices); unused for objects.
    public var intValue: Int?
    /// Creates a key for `string`.
    public init(_ string: String) { self.stringValue = string; self.intValue = nil }
    /// Creates a key for `stringValue`.
    public init?(stringValue: String) { self.init(stringValue) }
    /// Creates an index key.
    public init?(intValue: Int) { self.stringValue = String(intValue); self.intValue = intValue }
}
