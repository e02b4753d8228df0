import Foundation

/// The one JSON writer: compact text, object keys sorted (deterministic output), strings escaped
/// as JavaScript's `JSON.stringify` escapes them.
///
/// Numbers: ``JSONValue/int(_:)`` as digits; an integral ``JSONValue/double(_:)`` below 1e15 as
/// `1000.0` (so the kind survives a round trip); other doubles in Swift's shortest form that
/// reads back to the same bits; non-finite doubles (which JSON cannot carry) as `null`.
public enum JSONWriter {
    /// Appends the JSON text of `value` to `out`.
    public static func write(_ value: JSONValue, into out: inout String) {
        switch value {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d): writeNumber(d, into: &out)
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

    /// Appends `d` as a JSON number (`null` when it is not finite).
    public static func writeNumber(_ d: Double, into out: inout String) {
        if !d.isFinite {
            out += "null"
        } else if d == d.rounded(), abs(d) < 1e15 {
            out += String(Int64(d)); out += ".0"
        } else {
            out += "\(d)"
        }
    }

    /// Appends `s` as a quoted JSON string: `"` and `\` escaped, `\b \f \n \r \t` in their short
    /// forms, other control characters as `\u00XX`; `/` and non-ASCII characters as they are.
    public static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where u.value < 0x20:
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(u)
            }
        }
        out += "\""
    }

    /// `s` as a quoted JSON string (see ``writeString(_:into:)``).
    public static func quoted(_ s: String) -> String {
        var out = ""
        writeString(s, into: &out)
        return out
    }
}

extension JSONValue: CustomStringConvertible {
    /// Compact JSON text with sorted keys (``JSONWriter``).
    public var jsonString: String {
        var out = ""
        JSONWriter.write(self, into: &out)
        return out
    }

    /// ``jsonString`` as UTF-8 bytes.
    public var jsonData: Data { Data(jsonString.utf8) }

    /// The value as compact JSON (same as ``jsonString``).
    public var description: String { jsonString }
}
