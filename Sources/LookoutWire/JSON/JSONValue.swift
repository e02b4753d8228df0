/// A JSON value with exact 64-bit integers: the one JSON value type of every Kit and simulator.
///
/// Numbers compare as JavaScript compares them: `.int(1000) == .double(1000)` (and they hash
/// alike), so a value read back from a server that wrote `1000.0` equals the one sent as `1000`.
/// The kind is still kept: ``JSONParser`` decides `.int` vs `.double` by its
/// ``JSONParser/Numbers`` option, and ``JSONWriter`` writes an integral `.double` as `1000.0`.
public enum JSONValue: Sendable {
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
    /// An object (key order is not kept; ``JSONWriter`` sorts keys).
    case object([String: JSONValue])
}

extension JSONValue: Hashable {
    /// Equality with numbers compared by value (`.int(1) == .double(1.0)`).
    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.int, .double), (.double, .int), (.double, .double): return a.doubleValue == b.doubleValue
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)): return x == y
        default: return false
        }
    }

    /// A hash consistent with `==` (an integral double hashes like the integer).
    public func hash(into h: inout Hasher) {
        switch self {
        case .null: h.combine(0)
        case .bool(let b): h.combine(1); h.combine(b)
        case .int(let i): h.combine(2); h.combine(i)
        case .double(let d):
            if let i = int64Value { h.combine(2); h.combine(i) } else { h.combine(3); h.combine(d) }
        case .string(let s): h.combine(4); h.combine(s)
        case .array(let a): h.combine(5); h.combine(a)
        case .object(let o): h.combine(6); h.combine(o)
        }
    }
}
