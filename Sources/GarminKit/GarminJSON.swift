import Foundation

/// A JSON value as returned by the Connect API (numbers keep integer-ness).
public enum GarminJSON: Sendable, Equatable, Codable {
    /// `null`.
    case null
    /// `true` / `false`.
    case bool(Bool)
    /// An integer number.
    case int(Int64)
    /// A number with a fraction or exponent.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([GarminJSON])
    /// An object (key order is not kept).
    case object([String: GarminJSON])

    /// Parses JSON bytes; throws ``GarminError/decoding(_:)`` naming the problem.
    public static func parse(_ data: Data) throws -> GarminJSON {
        do { return try JSONDecoder().decode(GarminJSON.self, from: data) } catch {
            throw GarminError.decoding("malformed JSON (\(data.count) bytes)")
        }
    }

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let i = try? c.decode(Int64.self) { self = .int(i) }
        else if let d = try? c.decode(Double.self) { self = .double(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([GarminJSON].self) { self = .array(a) }
        else { self = .object(try c.decode([String: GarminJSON].self)) }
    }

    /// Encodes the value.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// Member of an object.
    public subscript(key: String) -> GarminJSON? {
        if case .object(let o) = self { return o[key] }
        return nil
    }
    /// The string, if this is one.
    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    /// The number as Double, if this is one.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
    /// The number as Int64 (integral doubles too), if this is one.
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9e18: return Int64(d)
        default: return nil
        }
    }
    /// The array, if this is one.
    public var arrayValue: [GarminJSON]? { if case .array(let a) = self { return a }; return nil }
    /// The object, if this is one.
    public var objectValue: [String: GarminJSON]? { if case .object(let o) = self { return o }; return nil }
    /// Whether this is `null`.
    public var isNull: Bool { self == .null }

    /// Compact JSON text.
    public var jsonData: Data { (try? JSONEncoder().encode(self)) ?? Data("null".utf8) }
}
