/// A Lua value copied out of (or to be pushed into) a Lua state.
///
/// Integers and floats stay apart as in Lua 5.4, strings are bytes, and tables become arrays
/// (keys exactly `1…n`, or a table carrying `json.array_mt`) or dictionaries with string keys.
public enum LuaValue: Sendable, Hashable {
    case `nil`
    /// JSON `null` (`json.null`, a NULL light userdata in Lua).
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(LuaString)
    case array([LuaValue])
    case object([String: LuaValue])
    /// A Lua function kept by the host; release it with `LuaEngine.release(_:)`.
    case function(LuaRef)

    /// A string value from Swift text.
    public static func text(_ s: String) -> LuaValue { .string(LuaString(s)) }

    /// The value as Swift text, if it is a string of valid UTF-8.
    public var text: String? {
        if case .string(let s) = self { return s.text }
        return nil
    }

    /// The value as an integer (floats with an integral value included).
    public var int: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d): return Int64(exactly: d)
        default: return nil
        }
    }

    /// The value as a number.
    public var double: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The Lua type name (`"table"` for arrays and objects, `"userdata"` for null).
    public var typeName: String {
        switch self {
        case .nil: return "nil"
        case .null: return "userdata"
        case .bool: return "boolean"
        case .int, .double: return "number"
        case .string: return "string"
        case .array, .object: return "table"
        case .function: return "function"
        }
    }

    /// A field of an object, or `.nil`.
    public subscript(key: String) -> LuaValue {
        if case .object(let o) = self { return o[key] ?? .nil }
        return .nil
    }
}

extension LuaValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(LuaString(value)) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: LuaValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, LuaValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .nil }
}

/// The bytes of a Lua string. Lua strings are byte strings: invalid UTF-8 survives unchanged.
public struct LuaString: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The exact bytes.
    public var bytes: [UInt8]

    /// Wraps bytes.
    public init(bytes: [UInt8]) { self.bytes = bytes }
    /// The UTF-8 bytes of `text`.
    public init(_ text: String) { self.bytes = Array(text.utf8) }
    public init(stringLiteral value: String) { self.init(value) }

    /// The text, if the bytes are valid UTF-8.
    public var text: String? {
        String(validating: bytes, as: UTF8.self)
    }

    /// The text with invalid bytes replaced by U+FFFD (for messages only).
    public var description: String { String(decoding: bytes, as: UTF8.self) }
}

/// A Lua value anchored in the registry of one state, e.g. a callback function.
public struct LuaRef: Sendable, Hashable {
    /// The registry reference (`luaL_ref`).
    public let ref: Int32
    /// The state generation it belongs to; a ref from a closed state is never dereferenced.
    public let generation: UInt64
}
