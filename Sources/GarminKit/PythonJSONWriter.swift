import Foundation

/// Writes flat JSON objects the way Python's `json.dump` does: keys in the given order,
/// `ensure_ascii` escaping, `indent=4` or single-line `", "` / `": "` separators.
enum PythonJSONWriter {
    /// A scalar value of a token file.
    enum Scalar {
        case string(String)
        case int(Int)
        case null
    }

    /// One object with `indent` spaces per level (nil: single line), nested at `level`.
    static func object(_ pairs: [(String, Scalar)], indent: Int?, level: Int = 0) -> String {
        guard let indent else {
            return "{" + pairs.map { "\(quote($0.0)): \(scalar($0.1))" }.joined(separator: ", ") + "}"
        }
        let pad = String(repeating: " ", count: indent * (level + 1))
        let close = String(repeating: " ", count: indent * level)
        return "{\n" + pairs.map { "\(pad)\(quote($0.0)): \(scalar($0.1))" }.joined(separator: ",\n") + "\n\(close)}"
    }

    static func scalar(_ v: Scalar) -> String {
        switch v {
        case .string(let s): return quote(s)
        case .int(let i): return String(i)
        case .null: return "null"
        }
    }

    /// A JSON string literal with Python's `ensure_ascii=True` escaping.
    static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.utf16 {
            switch u {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x08: out += "\\b"
            case 0x0C: out += "\\f"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(UInt8(u)))
            default: out += String(format: "\\u%04x", u)
            }
        }
        return out + "\""
    }
}
