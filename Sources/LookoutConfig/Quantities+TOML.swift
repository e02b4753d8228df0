import Lua

extension Quantities {
    /// Seconds from a TOML value: an integer or float is a number of seconds, a string is parsed
    /// with `parseDuration`; `nil` for other kinds or invalid values.
    public static func duration(_ value: TOMLValue) -> Double? {
        switch value {
        case .integer(let n): return n >= 0 ? Double(n) : nil
        case .float(let x): return x >= 0 && x.isFinite ? x : nil
        case .string(let text): return parseDuration(text)
        default: return nil
        }
    }

    /// Bytes from a TOML value: an integer (or a float with no fraction) is a number of bytes, a
    /// string is parsed with `parseSize`; `nil` for other kinds or invalid values.
    public static func size(_ value: TOMLValue) -> Int? {
        switch value {
        case .integer(let n): return n >= 0 ? Int(exactly: n) : nil
        case .float(let x):
            guard x >= 0, x.isFinite, x == x.rounded(), x < 9.2e18 else { return nil }
            return Int(x)
        case .string(let text): return parseSize(text)
        default: return nil
        }
    }
}
