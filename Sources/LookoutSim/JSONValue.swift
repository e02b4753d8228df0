import Foundation

/// A JSON value as the simulator stores it. Integers are kept as exact `Int64`, so epoch
/// milliseconds and large identifiers round-trip without floating-point loss. Equality treats
/// numbers as JavaScript does: `.int(1000) == .double(1000)`.
public enum JSONValue: Sendable, Hashable {
    /// `null`
    case null
    /// `true` / `false`
    case bool(Bool)
    /// An integral number that fits in 64 bits.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object (key order is not preserved; serialisation sorts keys).
    case object([String: JSONValue])

    /// The value as a string, if it is one.
    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    /// The value as an object, if it is one.
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o }; return nil }
    /// The value as an array, if it is one.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
    /// The value as a Bool, if it is one.
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    /// The numeric value as a `Double` (ints converted), or nil.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
    /// The numeric value as an `Int64` if it is integral, or nil.
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }
    /// Equality with numbers compared by value.
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

    /// Hash consistent with `==` (integral doubles hash like ints).
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

    /// True for `.int` and `.double`.
    public var isNumber: Bool { doubleValue != nil }

    /// Subscript into an object (nil for other kinds or missing keys).
    public subscript(key: String) -> JSONValue? { objectValue?[key] }

    /// A number value from a Double, stored as `.int` when integral.
    public static func number(_ d: Double) -> JSONValue {
        if d.rounded() == d, abs(d) < 9.0e15 { return .int(Int64(d)) }
        return .double(d)
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `.string` from a literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// `.int` from a literal.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// `.double` from a literal.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// `.bool` from a literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `.null` from `nil`.
    public init(nilLiteral: ()) { self = .null }
    /// `.array` from a literal.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// `.object` from a literal (later duplicate keys win).
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, b in b }))
    }
}

// MARK: - Serialisation

extension JSONValue {
    /// Compact JSON text with sorted object keys.
    public var jsonString: String {
        var out = ""
        write(into: &out)
        return out
    }

    /// UTF-8 JSON bytes.
    public var jsonData: Data { Data(jsonString.utf8) }

    private func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isNaN || d.isInfinite {
                out += "null"  // as JSON.stringify does
            } else if d.rounded() == d && abs(d) < 1e15 {
                out += String(Int64(d))
            } else {
                out += "\(d)"
            }
        case .string(let s): Self.writeString(s, into: &out)
        case .array(let a):
            out += "["
            for (i, v) in a.enumerated() {
                if i > 0 { out += "," }
                v.write(into: &out)
            }
            out += "]"
        case .object(let o):
            out += "{"
            for (i, k) in o.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                Self.writeString(k, into: &out)
                out += ":"
                o[k]!.write(into: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    out += String(format: "\\u%04x", u.value)
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        out += "\""
    }
}

// MARK: - Parsing

/// Error thrown by `JSONValue.parse` for malformed input.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    /// Byte offset where parsing failed.
    public let offset: Int
    /// What was wrong.
    public let reason: String
    /// Human-readable form.
    public var description: String { "JSON parse error at \(offset): \(reason)" }
}

extension JSONValue {
    /// Parses JSON text (RFC 8259). Integers that fit `Int64` stay exact.
    public static func parse(_ data: Data) throws -> JSONValue {
        var p = Parser(bytes: [UInt8](data))
        p.skipWS()
        let v = try p.value(depth: 0)
        p.skipWS()
        guard p.i == p.bytes.count else { throw p.error("trailing characters") }
        return v
    }

    /// Parses JSON text from a string.
    public static func parse(_ text: String) throws -> JSONValue { try parse(Data(text.utf8)) }

    private struct Parser {
        let bytes: [UInt8]
        var i = 0

        func error(_ r: String) -> JSONParseError { JSONParseError(offset: i, reason: r) }

        mutating func skipWS() {
            while i < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[i]) { i += 1 }
        }

        mutating func expect(_ lit: String) throws {
            for b in lit.utf8 {
                guard i < bytes.count, bytes[i] == b else { throw error("expected \(lit)") }
                i += 1
            }
        }

        mutating func value(depth: Int) throws -> JSONValue {
            guard depth < 512 else { throw error("too deep") }
            guard i < bytes.count else { throw error("unexpected end") }
            switch bytes[i] {
            case UInt8(ascii: "{"):
                i += 1
                var obj: [String: JSONValue] = [:]
                skipWS()
                if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(obj) }
                while true {
                    skipWS()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw error("expected key") }
                    let k = try string()
                    skipWS()
                    try expect(":")
                    skipWS()
                    obj[k] = try value(depth: depth + 1)
                    skipWS()
                    guard i < bytes.count else { throw error("unexpected end") }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(obj) }
                    throw error("expected , or }")
                }
            case UInt8(ascii: "["):
                i += 1
                var arr: [JSONValue] = []
                skipWS()
                if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(arr) }
                while true {
                    skipWS()
                    arr.append(try value(depth: depth + 1))
                    skipWS()
                    guard i < bytes.count else { throw error("unexpected end") }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(arr) }
                    throw error("expected , or ]")
                }
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try expect("true"); return .bool(true)
            case UInt8(ascii: "f"): try expect("false"); return .bool(false)
            case UInt8(ascii: "n"): try expect("null"); return .null
            default: return try number()
            }
        }

        mutating func number() throws -> JSONValue {
            let start = i
            var isInt = true
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
            var digits = 0
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1; digits += 1 }
            guard digits > 0 else { throw error("bad number") }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                isInt = false
                i += 1
                var fd = 0
                while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1; fd += 1 }
                guard fd > 0 else { throw error("bad number") }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                isInt = false
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                var ed = 0
                while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1; ed += 1 }
                guard ed > 0 else { throw error("bad number") }
            }
            let text = String(decoding: bytes[start..<i], as: UTF8.self)
            if isInt, let v = Int64(text) { return .int(v) }
            guard let d = Double(text) else { throw error("bad number") }
            return .double(d)
        }

        mutating func hex4() throws -> UInt32 {
            guard let v = Parser.hex4(bytes, at: i) else { throw error("bad \\u escape") }
            i += 4
            return v
        }

        /// The 4 hex digits at `at` (digits only: no sign), or nil.
        static func hex4(_ bytes: [UInt8], at: Int) -> UInt32? {
            guard at >= 0, at + 4 <= bytes.count else { return nil }
            var v: UInt32 = 0
            for b in bytes[at..<at + 4] {
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): v = v << 4 | UInt32(b - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): v = v << 4 | UInt32(b - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): v = v << 4 | UInt32(b - UInt8(ascii: "A") + 10)
                default: return nil
                }
            }
            return v
        }

        mutating func string() throws -> String {
            i += 1  // opening quote
            var out = [UInt8]()
            while true {
                guard i < bytes.count else { throw error("unterminated string") }
                let b = bytes[i]
                i += 1
                if b == UInt8(ascii: "\"") { break }
                if b < 0x20 { throw error("control character in string") }
                if b != UInt8(ascii: "\\") { out.append(b); continue }
                guard i < bytes.count else { throw error("bad escape") }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var cp = try hex4()
                    // A high surrogate combines only with a low one that follows; anything else
                    // leaves it unpaired (U+FFFD) and the next escape is read on its own.
                    if cp >= 0xD800, cp < 0xDC00, i + 6 <= bytes.count, bytes[i] == UInt8(ascii: "\\"),
                        bytes[i + 1] == UInt8(ascii: "u"), let lo = Parser.hex4(bytes, at: i + 2),
                        lo >= 0xDC00, lo < 0xE000
                    {
                        i += 6
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                    }
                    let scalar = Unicode.Scalar(cp) ?? "\u{FFFD}"
                    out.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: throw error("bad escape")
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
}
