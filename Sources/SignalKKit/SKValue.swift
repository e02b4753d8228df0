/// A JSON value as it appears in Signal K messages (delta values, meta, full models, sources).
///
/// Numbers keep the distinction the wire makes: `45500` decodes as ``int(_:)``, `45500.0` and
/// `3.85` decode as ``double(_:)``. Use ``doubleValue`` to read either as a `Double`
/// (Signal K values are SI and should normally be treated as `Double`).
public enum SKValue: Sendable, Hashable {
    /// JSON `null`. In a delta it means "the source is alive but has no data", or clears a notification.
    case null
    /// JSON `true` / `false`.
    case bool(Bool)
    /// A JSON number written without fraction or exponent that fits in `Int`.
    case int(Int)
    /// Any other JSON number.
    case double(Double)
    /// A JSON string.
    case string(String)
    /// A JSON array.
    case array([SKValue])
    /// A JSON object (key order is not preserved).
    case object([String: SKValue])

    /// `true` for ``null``.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The number as a `Double` (from ``int(_:)`` or ``double(_:)``), else `nil`.
    public var doubleValue: Double? {
        switch self {
        case .double(let d): return d
        case .int(let i): return Double(i)
        default: return nil
        }
    }

    /// The integer for ``int(_:)``, or a ``double(_:)`` that is integral and in range; else `nil`.
    public var intValue: Int? {
        switch self {
        case .int(let i): return i
        case .double(let d):
            guard d.rounded(.towardZero) == d, d >= -9.2e18, d <= 9.2e18 else { return nil }
            return Int(d)
        default: return nil
        }
    }

    /// The string for ``string(_:)``, else `nil`.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }

    /// The boolean for ``bool(_:)``, else `nil`.
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }

    /// The elements for ``array(_:)``, else `nil`.
    public var arrayValue: [SKValue]? { if case .array(let a) = self { return a } else { return nil } }

    /// The members for ``object(_:)``, else `nil`.
    public var objectValue: [String: SKValue]? { if case .object(let o) = self { return o } else { return nil } }

    /// Member lookup for objects (`nil` for a missing key or a non-object).
    public subscript(key: String) -> SKValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// Element lookup for arrays (`nil` when out of range or not an array).
    public subscript(index: Int) -> SKValue? {
        if case .array(let a) = self, a.indices.contains(index) { return a[index] }
        return nil
    }

    /// A short name of the JSON type (`"null"`, `"bool"`, `"number"`, `"string"`, `"array"`, `"object"`),
    /// used in error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "bool"
        case .int, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// Compact JSON text for this value. Object keys are sorted, so the output is deterministic.
    /// Non-finite doubles (which JSON cannot carry) are written as `null`.
    public var jsonString: String {
        var out = ""
        SKValue.write(self, into: &out)
        return out
    }

    /// Parses JSON text strictly (see ``SKJSON/parse(_:)-(UnsafeRawBufferPointer)``).
    public init(json: String) throws {
        self = try SKJSON.parse(json)
    }

    static func write(_ v: SKValue, into out: inout String) {
        switch v {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if !d.isFinite { out += "null" } else if d == d.rounded(), abs(d) < 1e15 {
                out += String(Int(d)); out += ".0"
            } else { out += "\(d)" }
        case .string(let s): writeString(s, into: &out)
        case .array(let a):
            out += "["
            for (i, e) in a.enumerated() {
                if i > 0 { out += "," }
                write(e, into: &out)
            }
            out += "]"
        case .object(let o):
            out += "{"
            for (i, k) in o.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                writeString(k, into: &out)
                out += ":"
                write(o[k]!, into: &out)
            }
            out += "}"
        }
    }

    static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20:
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(u)
            }
        }
        out += "\""
    }
}

extension SKValue: CustomStringConvertible {
    /// The value as compact JSON (same as ``jsonString``).
    public var description: String { jsonString }
}

extension SKValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `nil` literal → ``null``.
    public init(nilLiteral: ()) { self = .null }
    /// Boolean literal → ``bool(_:)``.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Integer literal → ``int(_:)``.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// Float literal → ``double(_:)``.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// String literal → ``string(_:)``.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Array literal → ``array(_:)``.
    public init(arrayLiteral elements: SKValue...) { self = .array(elements) }
    /// Dictionary literal → ``object(_:)`` (a later duplicate key wins).
    public init(dictionaryLiteral elements: (String, SKValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, b in b }))
    }
}

extension SKValue: Codable {
    /// Decodes any JSON value through `Decoder` (for use inside other `Codable` types).
    /// Prefer ``SKJSON`` for parsing raw bytes: it is much faster and keeps integers distinct.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let i = try? c.decode(Int.self) { self = .int(i) }
        else if let d = try? c.decode(Double.self) { self = .double(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([SKValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: SKValue].self)) }
    }

    /// Encodes the value as the corresponding JSON value.
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
}
