import Foundation

/// A strict, fast JSON parser producing ``SKValue``.
///
/// Strict means RFC 8259: no trailing commas, no comments, no leading zeros, no bare control
/// characters in strings, valid UTF-8, valid `\u` escapes (surrogate pairs combined), a single
/// top-level value with only whitespace around it. Nesting deeper than ``maxDepth`` is rejected
/// instead of exhausting the stack. Errors are ``SignalKDecodingError/invalidJSON(offset:reason:)``.
public enum SKJSON {
    /// The deepest nesting of arrays/objects accepted.
    public static let maxDepth = 256

    /// Parses JSON from raw bytes.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws -> SKValue {
        var p = Parser(bytes.bindMemory(to: UInt8.self))
        return try p.parseDocument()
    }

    /// Parses JSON from a byte array.
    public static func parse(_ bytes: [UInt8]) throws -> SKValue {
        try bytes.withUnsafeBytes { try parse($0) }
    }

    /// Parses JSON from `Data`.
    public static func parse(_ data: Data) throws -> SKValue {
        try data.withUnsafeBytes { try parse($0) }
    }

    /// Parses JSON from a string (its UTF-8 bytes).
    public static func parse(_ text: String) throws -> SKValue {
        var text = text
        return try text.withUTF8 { try parse(UnsafeRawBufferPointer($0)) }
    }

    struct Parser {
        let buf: UnsafeBufferPointer<UInt8>
        var i = 0
        var depth = 0

        init(_ buf: UnsafeBufferPointer<UInt8>) { self.buf = buf }

        func fail(_ reason: String, at offset: Int? = nil) -> SignalKDecodingError {
            .invalidJSON(offset: offset ?? i, reason: reason)
        }

        mutating func skipWS() {
            while i < buf.count {
                let c = buf[i]
                if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i += 1 } else { break }
            }
        }

        mutating func parseDocument() throws -> SKValue {
            skipWS()
            if i >= buf.count { throw fail("empty input") }
            let v = try parseValue()
            skipWS()
            if i < buf.count { throw fail("unexpected data after the JSON value") }
            return v
        }

        func describe(_ c: UInt8) -> String {
            if c >= 0x21 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
            return "byte 0x" + String(c, radix: 16)
        }

        mutating func parseValue() throws -> SKValue {
            guard i < buf.count else { throw fail("unexpected end of input, expected a value") }
            switch buf[i] {
            case UInt8(ascii: "{"): return try parseObject()
            case UInt8(ascii: "["): return try parseArray()
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
            default: throw fail("unexpected \(describe(buf[i])), expected a value")
            }
        }

        mutating func literal(_ word: StaticString) throws {
            let n = word.utf8CodeUnitCount
            let start = i
            guard i + n <= buf.count else { throw fail("invalid literal, expected \(word)", at: start) }
            let p = word.utf8Start
            for k in 0..<n where buf[i + k] != p[k] {
                throw fail("invalid literal, expected \(word)", at: start)
            }
            i += n
        }

        mutating func enter() throws {
            depth += 1
            if depth > SKJSON.maxDepth { throw fail("nesting deeper than \(SKJSON.maxDepth)") }
        }

        mutating func parseObject() throws -> SKValue {
            try enter()
            i += 1
            var dict: [String: SKValue] = [:]
            skipWS()
            if i < buf.count && buf[i] == UInt8(ascii: "}") {
                i += 1; depth -= 1
                return .object(dict)
            }
            while true {
                skipWS()
                guard i < buf.count else { throw fail("unexpected end of input in object") }
                guard buf[i] == UInt8(ascii: "\"") else {
                    throw fail("unexpected \(describe(buf[i])), expected a string key")
                }
                let key = try parseString()
                skipWS()
                guard i < buf.count, buf[i] == UInt8(ascii: ":") else {
                    throw fail(i < buf.count ? "expected ':' after object key" : "unexpected end of input in object")
                }
                i += 1
                skipWS()
                dict[key] = try parseValue()
                skipWS()
                guard i < buf.count else { throw fail("unexpected end of input in object") }
                if buf[i] == UInt8(ascii: ",") { i += 1; continue }
                if buf[i] == UInt8(ascii: "}") { i += 1; break }
                throw fail("unexpected \(describe(buf[i])), expected ',' or '}'")
            }
            depth -= 1
            return .object(dict)
        }

        mutating func parseArray() throws -> SKValue {
            try enter()
            i += 1
            var arr: [SKValue] = []
            skipWS()
            if i < buf.count && buf[i] == UInt8(ascii: "]") {
                i += 1; depth -= 1
                return .array(arr)
            }
            while true {
                skipWS()
                arr.append(try parseValue())
                skipWS()
                guard i < buf.count else { throw fail("unexpected end of input in array") }
                if buf[i] == UInt8(ascii: ",") { i += 1; continue }
                if buf[i] == UInt8(ascii: "]") { i += 1; break }
                throw fail("unexpected \(describe(buf[i])), expected ',' or ']'")
            }
            depth -= 1
            return .array(arr)
        }

        /// Parses a string starting at the opening quote.
        mutating func parseString() throws -> String {
            let open = i
            i += 1
            let start = i
            var ascii = true
            // Fast path: no escapes.
            while i < buf.count {
                let c = buf[i]
                if c == UInt8(ascii: "\"") {
                    let slice = UnsafeBufferPointer(rebasing: buf[start..<i])
                    i += 1
                    if ascii { return String(decoding: slice, as: UTF8.self) }
                    guard let s = String(validating: slice, as: UTF8.self) else {
                        throw fail("invalid UTF-8 in string", at: open)
                    }
                    return s
                }
                if c == UInt8(ascii: "\\") { break }
                if c < 0x20 { throw fail("unescaped control character in string") }
                if c >= 0x80 { ascii = false }
                i += 1
            }
            guard i < buf.count else { throw fail("unterminated string", at: open) }
            // Slow path with escapes.
            var bytes = [UInt8](UnsafeBufferPointer(rebasing: buf[start..<i]))
            while i < buf.count {
                let c = buf[i]
                if c == UInt8(ascii: "\"") {
                    i += 1
                    guard let s = String(validating: bytes, as: UTF8.self) else {
                        throw fail("invalid UTF-8 in string", at: open)
                    }
                    return s
                }
                if c < 0x20 { throw fail("unescaped control character in string") }
                if c != UInt8(ascii: "\\") { bytes.append(c); i += 1; continue }
                i += 1
                guard i < buf.count else { break }
                let e = buf[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): bytes.append(0x22)
                case UInt8(ascii: "\\"): bytes.append(0x5C)
                case UInt8(ascii: "/"): bytes.append(0x2F)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        guard i + 1 < buf.count, buf[i] == UInt8(ascii: "\\"), buf[i + 1] == UInt8(ascii: "u") else {
                            throw fail("unpaired UTF-16 surrogate in \\u escape")
                        }
                        i += 2
                        let low = try hex4()
                        guard low >= 0xDC00 && low < 0xE000 else { throw fail("invalid UTF-16 low surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        throw fail("unpaired UTF-16 surrogate in \\u escape")
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
                    bytes.append(contentsOf: UTF8.encode(u)!)
                default:
                    throw fail("invalid escape \\\(Character(Unicode.Scalar(e)))", at: i - 2)
                }
            }
            throw fail("unterminated string", at: open)
        }

        mutating func hex4() throws -> UInt32 {
            guard i + 4 <= buf.count else { throw fail("truncated \\u escape") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = buf[i]
                let d: UInt8
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
                default: throw fail("invalid hex digit in \\u escape")
                }
                v = v << 4 | UInt32(d)
                i += 1
            }
            return v
        }

        static let pow10: [Double] = [
            1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
            1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
        ]

        mutating func parseNumber() throws -> SKValue {
            let start = i
            var negative = false
            if buf[i] == UInt8(ascii: "-") {
                negative = true
                i += 1
            }
            func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
            guard i < buf.count, isDigit(buf[i]) else { throw fail("invalid number: expected a digit", at: start) }
            var mantissa: UInt64 = 0
            var digits = 0  // significant digits accumulated into mantissa
            var overflow = false
            if buf[i] == UInt8(ascii: "0") {
                i += 1
                if i < buf.count, isDigit(buf[i]) { throw fail("invalid number: leading zero", at: start) }
            } else {
                while i < buf.count, isDigit(buf[i]) {
                    if digits < 19 {
                        mantissa = mantissa &* 10 &+ UInt64(buf[i] - 0x30)
                        digits += 1
                    } else { overflow = true }
                    i += 1
                }
            }
            var fracDigits = 0
            var isDouble = false
            if i < buf.count, buf[i] == UInt8(ascii: ".") {
                isDouble = true
                i += 1
                guard i < buf.count, isDigit(buf[i]) else { throw fail("invalid number: expected a digit after '.'", at: start) }
                while i < buf.count, isDigit(buf[i]) {
                    if digits < 19 {
                        mantissa = mantissa &* 10 &+ UInt64(buf[i] - 0x30)
                        if mantissa != 0 { digits += 1 }
                        fracDigits += 1
                    } else { overflow = true }
                    i += 1
                }
            }
            var exp = 0
            var hugeExponent = false  // more exponent digits than exp keeps: only Double(text) can tell
            if i < buf.count, buf[i] == UInt8(ascii: "e") || buf[i] == UInt8(ascii: "E") {
                isDouble = true
                i += 1
                var expNeg = false
                if i < buf.count, buf[i] == UInt8(ascii: "+") || buf[i] == UInt8(ascii: "-") {
                    expNeg = buf[i] == UInt8(ascii: "-")
                    i += 1
                }
                guard i < buf.count, isDigit(buf[i]) else { throw fail("invalid number: expected a digit in exponent", at: start) }
                while i < buf.count, isDigit(buf[i]) {
                    if exp < 100_000 { exp = exp * 10 + Int(buf[i] - 0x30) } else { hugeExponent = true }
                    i += 1
                }
                if expNeg { exp = -exp }
            }
            if !isDouble && !overflow {
                if negative {
                    if mantissa <= UInt64(Int.max) + 1 { return .int(mantissa == UInt64(Int.max) + 1 ? Int.min : -Int(mantissa)) }
                } else if mantissa <= UInt64(Int.max) {
                    return .int(Int(mantissa))
                }
            }
            // Clinger's fast path: exact when the mantissa fits in 53 bits and the power of ten is exact.
            let e10 = exp - fracDigits
            if !overflow, !hugeExponent, mantissa < (1 << 53), e10 >= -22, e10 <= 22 {
                var d = Double(mantissa)
                d = e10 < 0 ? d / Self.pow10[-e10] : d * Self.pow10[e10]
                return .double(negative ? -d : d)
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: buf[start..<i]), as: UTF8.self)
            guard let d = Double(text) else { throw fail("invalid number \(text)", at: start) }
            return .double(d)
        }
    }
}
