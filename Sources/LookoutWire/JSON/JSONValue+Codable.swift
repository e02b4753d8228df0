/// A `Decoder` that holds a whole ``JSONValue`` tree, so `JSONValue.init(from:)` can take the
/// tree as it is instead of probing containers (a Kit's tree decoder conforms).
public protocol JSONValueTreeDecoder: Decoder {
    /// The value being decoded.
    var jsonValue: JSONValue { get }
}

extension JSONValue: Codable {
    /// Decodes any JSON value; integral numbers that fit `Int64` become ``int(_:)`` (exact),
    /// others ``double(_:)``. Prefer ``JSONParser`` for raw bytes: it is much faster.
    public init(from decoder: any Decoder) throws {
        if let tree = decoder as? any JSONValueTreeDecoder {
            self = tree.jsonValue
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

    /// Encodes the value as the corresponding JSON value.
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
}

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
