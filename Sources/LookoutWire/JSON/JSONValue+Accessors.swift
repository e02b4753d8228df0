extension JSONValue {
    /// `true` for ``null``.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// `true` for ``int(_:)`` and ``double(_:)``.
    public var isNumber: Bool { doubleValue != nil }

    /// The number as a `Double` (from ``int(_:)`` or ``double(_:)``), else `nil` (strings too).
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The integer for ``int(_:)``, or a ``double(_:)`` that is integral and in `Int64`'s range;
    /// else `nil`.
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded(.towardZero) == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }

    /// ``int64Value`` as an `Int`.
    public var intValue: Int? { int64Value.flatMap { Int(exactly: $0) } }

    /// The string for ``string(_:)``, else `nil`.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }

    /// The boolean for ``bool(_:)``, else `nil`.
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }

    /// The elements for ``array(_:)``, else `nil`.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }

    /// The members for ``object(_:)``, else `nil`.
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o } else { return nil } }

    /// Member lookup for objects (`nil` for a missing key or a non-object).
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// Element lookup for arrays (`nil` when out of range or not an array).
    public subscript(index: Int) -> JSONValue? {
        if case .array(let a) = self, a.indices.contains(index) { return a[index] }
        return nil
    }

    /// A short name of the JSON type (`"null"`, `"bool"`, `"number"`, `"string"`, `"array"`,
    /// `"object"`), for error messages.
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

    /// A number from a `Double`: `.int` when it is integral and below 9e15 (where every integer
    /// is exact), else `.double`, as JavaScript keeps numbers.
    public static func number(_ d: Double) -> JSONValue {
        if d.rounded() == d, abs(d) < 9.0e15 { return .int(Int64(d)) }
        return .double(d)
    }
}
