import Foundation
import LookoutWire

/// A `Decoder` reading a `JSONValue` tree, with the same results as Foundation's `JSONDecoder`
/// (default strategies) for the types the Kit decodes, but with cheap type probes: a mismatch
/// throws a small `DecodingError` without a coding path. Coding paths are not tracked (always
/// empty); callers that need JSONDecoder's error text re-decode with it on failure
/// (`JSONValueDecoding.decode`).
struct JSONValueDecoder: JSONValueTreeDecoder, SingleValueDecodingContainer {
    let value: JSONValue

    var jsonValue: JSONValue { value }

    init(_ value: JSONValue) { self.value = value }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else { throw JSONValueDecoder.mismatch([String: JSONValue].self, value) }
        return KeyedDecodingContainer(JSONValueKeyedContainer<Key>(object: object))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw JSONValueDecoder.mismatch([JSONValue].self, value) }
        return JSONValueUnkeyedContainer(items: items)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Single value

    func decodeNil() -> Bool {
        if case .null = value { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool { try JSONValueDecoder.bool(value) }
    func decode(_ type: String.Type) throws -> String { try JSONValueDecoder.string(value) }
    func decode(_ type: Double.Type) throws -> Double { try JSONValueDecoder.double(value) }
    func decode(_ type: Float.Type) throws -> Float { try JSONValueDecoder.float(value) }
    func decode(_ type: Int.Type) throws -> Int { try JSONValueDecoder.integer(value) }
    func decode(_ type: Int8.Type) throws -> Int8 { try JSONValueDecoder.integer(value) }
    func decode(_ type: Int16.Type) throws -> Int16 { try JSONValueDecoder.integer(value) }
    func decode(_ type: Int32.Type) throws -> Int32 { try JSONValueDecoder.integer(value) }
    func decode(_ type: Int64.Type) throws -> Int64 { try JSONValueDecoder.integer(value) }
    func decode(_ type: UInt.Type) throws -> UInt { try JSONValueDecoder.integer(value) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try JSONValueDecoder.integer(value) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try JSONValueDecoder.integer(value) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try JSONValueDecoder.integer(value) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try JSONValueDecoder.integer(value) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONValueDecoder.decode(T.self, from: value) }

    // MARK: Conversions (JSONDecoder's rules)

    static func mismatch(_ type: Any.Type, _ value: JSONValue) -> DecodingError {
        DecodingError.typeMismatch(type, .init(codingPath: [], debugDescription: "Expected \(type)"))
    }

    @inline(__always) static func bool(_ value: JSONValue) throws -> Bool {
        guard case .bool(let b) = value else { throw mismatch(Bool.self, value) }
        return b
    }

    @inline(__always) static func string(_ value: JSONValue) throws -> String {
        guard case .string(let s) = value else { throw mismatch(String.self, value) }
        return s
    }

    @inline(__always) static func double(_ value: JSONValue) throws -> Double {
        switch value {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: throw mismatch(Double.self, value)
        }
    }

    static func float(_ value: JSONValue) throws -> Float {
        let f: Float
        switch value {
        case .int(let i): f = Float(i)
        case .double(let d): f = Float(d)
        default: throw mismatch(Float.self, value)
        }
        guard f.isFinite else { throw mismatch(Float.self, value) }
        return f
    }

    /// Integers decode from integral numbers in range (`.int`); `.double` values are never
    /// integral in range by the parser's rule, so they do not decode as integers.
    @inline(__always) static func integer<T: FixedWidthInteger>(_ value: JSONValue) throws -> T {
        guard case .int(let i) = value, let v = T(exactly: i) else { throw mismatch(T.self, value) }
        return v
    }

    /// Decodes any `Decodable`, with the special cases `JSONDecoder` makes (URL and Data from
    /// strings; Decimal is not supported and throws, so the caller falls back).
    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        // `unsafeBitCast` between identical types: the checked `as! T` costs a runtime cast.
        if T.self == JSONValue.self { return unsafeBitCast(value, to: T.self) }
        if T.self == NightscoutDate.self { return unsafeBitCast(try NightscoutDate(jsonValue: value), to: T.self) }
        if T.self == String.self { return unsafeBitCast(try string(value), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try double(value), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try integer(value) as Int, to: T.self) }
        if T.self == Int64.self { return unsafeBitCast(try integer(value) as Int64, to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try bool(value), to: T.self) }
        if T.self == URL.self {
            guard case .string(let s) = value, let url = URL(string: s) else { throw mismatch(URL.self, value) }
            return url as! T
        }
        if T.self == Data.self {
            guard case .string(let s) = value, let data = Data(base64Encoded: s) else { throw mismatch(Data.self, value) }
            return data as! T
        }
        if T.self == Decimal.self { throw JSONValueDecodingUnsupported() }
        return try T(from: JSONValueDecoder(value))
    }
}

/// Thrown for types this decoder does not mirror exactly (`Decimal`, which `JSONDecoder` reads
/// from the number text). A top-level throw makes `JSONValueDecoding` fall back to `JSONDecoder`;
/// no Kit model probes such a type with `try?`.
struct JSONValueDecodingUnsupported: Error {}

struct JSONValueKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: JSONValue]

    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    @inline(__always) func value(_ key: Key) throws -> JSONValue {
        guard let v = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription: "No value for \(key.stringValue)"))
        }
        return v
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try value(key) { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try JSONValueDecoder.bool(value(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try JSONValueDecoder.string(value(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try JSONValueDecoder.double(value(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try JSONValueDecoder.float(value(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try JSONValueDecoder.integer(value(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try JSONValueDecoder.integer(value(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try JSONValueDecoder.integer(value(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try JSONValueDecoder.integer(value(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try JSONValueDecoder.integer(value(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try JSONValueDecoder.integer(value(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try JSONValueDecoder.integer(value(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try JSONValueDecoder.integer(value(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try JSONValueDecoder.integer(value(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try JSONValueDecoder.integer(value(key)) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try JSONValueDecoder.decode(T.self, from: value(key))
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let v = object[key.stringValue] else { return nil }
        if case .null = v { return nil }
        return try JSONValueDecoder.decode(T.self, from: v)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try JSONValueDecoder(value(key)).container(keyedBy: NestedKey.self)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONValueDecoder(value(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        JSONValueDecoder(object["super"] ?? .null)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONValueDecoder(object[key.stringValue] ?? .null)
    }
}

struct JSONValueUnkeyedContainer: UnkeyedDecodingContainer {
    let items: [JSONValue]
    var currentIndex = 0

    init(items: [JSONValue]) { self.items = items }

    var codingPath: [any CodingKey] { [] }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    @inline(__always) func peek() throws -> JSONValue {
        guard currentIndex < items.count else {
            throw DecodingError.valueNotFound(JSONValue.self, .init(codingPath: [], debugDescription: "Unkeyed container is at end."))
        }
        return items[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        if case .null = try peek() { currentIndex += 1; return true }
        return false
    }

    mutating func next<T>(_ convert: (JSONValue) throws -> T) throws -> T {
        let v = try convert(peek())
        currentIndex += 1
        return v
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(JSONValueDecoder.bool) }
    mutating func decode(_ type: String.Type) throws -> String { try next(JSONValueDecoder.string) }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(JSONValueDecoder.double) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(JSONValueDecoder.float) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(JSONValueDecoder.integer) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(JSONValueDecoder.integer) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(JSONValueDecoder.integer) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(JSONValueDecoder.integer) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(JSONValueDecoder.integer) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(JSONValueDecoder.integer) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(JSONValueDecoder.integer) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(JSONValueDecoder.integer) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(JSONValueDecoder.integer) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(JSONValueDecoder.integer) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try next { try JSONValueDecoder.decode(T.self, from: $0) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try next { try JSONValueDecoder($0).container(keyedBy: NestedKey.self) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next { try JSONValueDecoder($0).unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next { JSONValueDecoder($0) }
    }
}

/// Parse-once decoding of response bodies: `JSONParser` + `JSONValueDecoder`, falling back
/// to Foundation's `JSONDecoder` whenever the fast path fails or might differ, so results and
/// error messages are exactly `JSONDecoder`'s.
enum JSONValueDecoding {
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if let parsed = try? JSONParser.parseCheckingExactness(data), parsed.exact,
           let value = try? JSONValueDecoder.decode(T.self, from: parsed.value) {
            return value
        }
        return try JSONDecoder().decode(T.self, from: data)
    }
}
