import Foundation

/// A JSON syntax error found by `JSONValueParser`, with the byte offset where it was found.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Byte offset into the input.
    public var offset: Int
    /// What was wrong.
    public var message: String
    /// Creates an error.
    public init(offset: Int, message: String) { self.offset = offset; self.message = message }
    /// `JSON parse error at byte N: message`.
    public var description: String { "JSON parse error at byte \(offset): \(message)" }
}

/// A small, strict, single-pass JSON parser producing `JSONValue` trees directly from UTF-8 bytes
/// (RFC 8259: no comments, no trailing commas, no leading zeros, no BOM, no unescaped control
/// characters, surrogate pairs must be paired, input must be valid UTF-8).
///
/// Numbers follow `JSONValue`'s rule: an integral number that fits `Int64` becomes `.int`, any
/// other number `.double`; numbers that overflow `Double` are errors.
public enum JSONValueParser {
    /// The deepest nesting of arrays and objects accepted.
    public static let maxDepth = 256

    /// Parses one JSON text (any value, surrounded by optional whitespace).
    public static func parse(_ data: Data) throws -> JSONValue {
        try parseCheckingExactness(data).value
    }

    /// Parses the UTF-8 of `text`.
    public static func parse(_ text: String) throws -> JSONValue {
        try parse(Data(text.utf8))
    }

    /// Parses `data`; `exact` is false when the result may differ from what Foundation's
    /// `JSONDecoder` + `JSONValue.init(from:)` would build (duplicate keys, where the last wins
    /// here; numbers whose integral-or-not reading Foundation decides differently from the text,
    /// e.g. `1.0000000000000001`, `1e18`), so the caller can fall back to `JSONDecoder`.
    static func parseCheckingExactness(_ data: Data) throws -> (value: JSONValue, exact: Bool) {
        try data.withUnsafeBytes { raw -> (JSONValue, Bool) in
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            var parser = Parser(bytes: bytes)
            let v = try parser.document()
            return (v, parser.exact)
        }
    }

    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var i = 0
        var depth = 0
        /// False once something was parsed where Foundation's decoding might differ.
        var exact = true

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        func fail(_ message: String, at offset: Int? = nil) -> JSONParseError {
            JSONParseError(offset: offset ?? i, message: message)
        }

        @inline(__always) mutating func skipWhitespace() {
            while i < bytes.count {
                let c = bytes[i]
                guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
                i += 1
            }
        }

        mutating func document() throws -> JSONValue {
            skipWhitespace()
            let v = try value()
            skipWhitespace()
            guard i == bytes.count else { throw fail("unexpected data after the JSON value") }
            return v
        }

        mutating func value() throws -> JSONValue {
            guard i < bytes.count else { throw fail("unexpected end of input") }
            switch bytes[i] {
            case UInt8(ascii: "{"): return try object()
            case UInt8(ascii: "["): return try array()
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw fail("unexpected character \(Parser.show(bytes[i]))")
            }
        }

        static func show(_ c: UInt8) -> String {
            c >= 0x20 && c < 0x7F ? "'\(Character(Unicode.Scalar(c)))'" : "0x" + String(c, radix: 16)
        }

        mutating func literal(_ word: StaticString) throws {
            let start = i
            let n = word.utf8CodeUnitCount
            guard bytes.count - i >= n else { throw fail("invalid literal", at: start) }
            let w = word.utf8Start
            for k in 0..<n where bytes[i + k] != w[k] { throw fail("invalid literal", at: start) }
            i += n
        }

        mutating func enter() throws {
            depth += 1
            guard depth <= JSONValueParser.maxDepth else {
                throw fail("nesting deeper than \(JSONValueParser.maxDepth) levels")
            }
        }

        /// Members of the objects being parsed (innermost last), reused so each object is built
        /// with its final capacity in one go.
        var members: [(String, JSONValue)] = []
        /// Elements of the arrays being parsed (innermost last).
        var elements: [JSONValue] = []

        mutating func object() throws -> JSONValue {
            try enter()
            i += 1
            skipWhitespace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
                i += 1; depth -= 1
                return .object([:])
            }
            let base = members.count
            while true {
                skipWhitespace()
                guard i < bytes.count else { throw fail("unexpected end of input in an object") }
                guard bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a string key, found \(Parser.show(bytes[i]))") }
                let key = try string()
                skipWhitespace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':' after an object key") }
                i += 1
                skipWhitespace()
                let v = try value()
                members.append((key, v))
                skipWhitespace()
                guard i < bytes.count else { throw fail("unexpected end of input in an object") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "}") { i += 1; break }
                throw fail("expected ',' or '}' in an object, found \(Parser.show(bytes[i]))")
            }
            var object = [String: JSONValue](minimumCapacity: members.count - base)
            for k in base..<members.count {
                let (key, v) = members[k]
                if object.updateValue(v, forKey: key) != nil { exact = false }
            }
            members.removeSubrange(base...)
            depth -= 1
            return .object(object)
        }

        mutating func array() throws -> JSONValue {
            try enter()
            i += 1
            skipWhitespace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                i += 1; depth -= 1
                return .array([])
            }
            let base = elements.count
            while true {
                skipWhitespace()
                let v = try value()
                elements.append(v)
                skipWhitespace()
                guard i < bytes.count else { throw fail("unexpected end of input in an array") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "]") { i += 1; break }
                throw fail("expected ',' or ']' in an array, found \(Parser.show(bytes[i]))")
            }
            let items = Array(elements[base...])
            elements.removeSubrange(base...)
            depth -= 1
            return .array(items)
        }

        /// Parses a string starting at the opening quote.
        mutating func string() throws -> String {
            let open = i
            i += 1
            let start = i
            var ascii = true
            // Fast scan: no escapes.
            while i < bytes.count {
                let c = bytes[i]
                if c == UInt8(ascii: "\"") {
                    let slice = UnsafeBufferPointer(rebasing: bytes[start..<i])
                    i += 1
                    if ascii { return String(decoding: slice, as: UTF8.self) }
                    guard let s = String(validating: slice, as: UTF8.self) else {
                        throw fail("invalid UTF-8 in a string", at: Parser.firstInvalidUTF8(slice, base: start))
                    }
                    return s
                }
                if c == UInt8(ascii: "\\") { break }
                if c < 0x20 { throw fail("unescaped control character \(Parser.show(c)) in a string") }
                if c >= 0x80 { ascii = false }
                i += 1
            }
            guard i < bytes.count else { throw fail("unterminated string", at: open) }
            // Slow path with escapes.
            var buffer: [UInt8] = []
            buffer.reserveCapacity(i - start + 16)
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i]))
            while true {
                guard i < bytes.count else { throw fail("unterminated string", at: open) }
                let c = bytes[i]
                if c == UInt8(ascii: "\"") { i += 1; break }
                if c < 0x20 { throw fail("unescaped control character \(Parser.show(c)) in a string") }
                if c >= 0x80 { ascii = false }
                if c != UInt8(ascii: "\\") { buffer.append(c); i += 1; continue }
                let escape = i
                i += 1
                guard i < bytes.count else { throw fail("unterminated string", at: open) }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): buffer.append(0x22)
                case UInt8(ascii: "\\"): buffer.append(0x5C)
                case UInt8(ascii: "/"): buffer.append(0x2F)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4(escape)
                    if scalar >= 0xD800 && scalar <= 0xDBFF {
                        guard bytes.count - i >= 6, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                            throw fail("unpaired high surrogate \\u\(String(scalar, radix: 16, uppercase: true))", at: escape)
                        }
                        let low = i
                        i += 2
                        let second = try hex4(low)
                        guard second >= 0xDC00 && second <= 0xDFFF else {
                            throw fail("high surrogate not followed by a low surrogate", at: escape)
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (second - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                        throw fail("unpaired low surrogate \\u\(String(scalar, radix: 16, uppercase: true))", at: escape)
                    }
                    Parser.appendUTF8(scalar, to: &buffer)
                default:
                    throw fail("invalid escape \\\(Character(Unicode.Scalar(e)))", at: escape)
                }
            }
            if ascii { return String(decoding: buffer, as: UTF8.self) }
            guard let s = String(validating: buffer, as: UTF8.self) else {
                throw fail("invalid UTF-8 in a string", at: open)
            }
            return s
        }

        mutating func hex4(_ escape: Int) throws -> UInt32 {
            guard bytes.count - i >= 4 else { throw fail("truncated \\u escape", at: escape) }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[i]
                let d: UInt8
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
                default: throw fail("invalid hex digit in a \\u escape", at: escape)
                }
                v = v << 4 | UInt32(d)
                i += 1
            }
            return v
        }

        static func appendUTF8(_ scalar: UInt32, to buffer: inout [UInt8]) {
            switch scalar {
            case 0..<0x80:
                buffer.append(UInt8(scalar))
            case 0x80..<0x800:
                buffer.append(UInt8(0xC0 | scalar >> 6)); buffer.append(UInt8(0x80 | scalar & 0x3F))
            case 0x800..<0x10000:
                buffer.append(UInt8(0xE0 | scalar >> 12)); buffer.append(UInt8(0x80 | scalar >> 6 & 0x3F))
                buffer.append(UInt8(0x80 | scalar & 0x3F))
            default:
                buffer.append(UInt8(0xF0 | scalar >> 18)); buffer.append(UInt8(0x80 | scalar >> 12 & 0x3F))
                buffer.append(UInt8(0x80 | scalar >> 6 & 0x3F)); buffer.append(UInt8(0x80 | scalar & 0x3F))
            }
        }

        /// The offset of the first byte that starts an invalid UTF-8 sequence (for error messages).
        static func firstInvalidUTF8(_ slice: UnsafeBufferPointer<UInt8>, base: Int) -> Int {
            var parser = Unicode.UTF8.ForwardParser()
            var iterator = slice.makeIterator()
            var offset = 0
            while true {
                switch parser.parseScalar(from: &iterator) {
                case .valid(let scalar): offset += scalar.count
                case .error: return base + offset
                case .emptyInput: return base
                }
            }
        }

        @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }

        mutating func number() throws -> JSONValue {
            let start = i
            let negative = bytes[i] == UInt8(ascii: "-")
            if negative { i += 1 }
            guard i < bytes.count, Parser.isDigit(bytes[i]) else { throw fail("expected a digit", at: i) }
            let intStart = i
            if bytes[i] == UInt8(ascii: "0") {
                i += 1
                if i < bytes.count, Parser.isDigit(bytes[i]) { throw fail("leading zero in a number", at: intStart) }
            } else {
                while i < bytes.count, Parser.isDigit(bytes[i]) { i += 1 }
            }
            let intEnd = i
            var fracStart = i, fracEnd = i
            var exponent = 0
            var hugeExponent = false  // more exponent digits than `exponent` keeps
            var integral = true
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                integral = false
                i += 1
                fracStart = i
                guard i < bytes.count, Parser.isDigit(bytes[i]) else { throw fail("expected a digit after '.'") }
                while i < bytes.count, Parser.isDigit(bytes[i]) { i += 1 }
                fracEnd = i
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                integral = false
                i += 1
                var expNegative = false
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
                    expNegative = bytes[i] == UInt8(ascii: "-"); i += 1
                }
                guard i < bytes.count, Parser.isDigit(bytes[i]) else { throw fail("expected a digit in the exponent") }
                while i < bytes.count, Parser.isDigit(bytes[i]) {
                    if exponent < 1_000_000 {
                        exponent = exponent * 10 + Int(bytes[i] - UInt8(ascii: "0"))
                    } else {
                        hugeExponent = true
                    }
                    i += 1
                }
                if expNegative { exponent = -exponent }
            }
            if integral {
                var v: Int64 = 0
                var overflow = false
                for k in intStart..<intEnd {
                    let d = Int64(bytes[k] - UInt8(ascii: "0"))
                    let (m, o1) = v.multipliedReportingOverflow(by: 10)
                    let (r, o2) = negative ? m.subtractingReportingOverflow(d) : m.addingReportingOverflow(d)
                    if o1 || o2 { overflow = true; break }
                    v = r
                }
                if !overflow { return .int(v) }
                return .double(try double(start))
            }
            let d = try double(start)
            if hugeExponent {
                // The text's exponent is not known exactly (a finite value then needs a fraction
                // about as long as the exponent): decide from the double, and let Foundation decide.
                exact = false
                if d == d.rounded(), let v = Int64(exactly: d) { return .int(v) }
                return .double(d)
            }
            // Decide integrality from the text: the digits of the integer and fraction parts, as
            // one significand, times 10^power.
            let intCount = intEnd - intStart, count = intCount + (fracEnd - fracStart)
            func digit(_ j: Int) -> Int64 {
                Int64((j < intCount ? bytes[intStart + j] : bytes[fracStart + j - intCount]) - UInt8(ascii: "0"))
            }
            var lo = 0, hi = count
            while lo < hi, digit(lo) == 0 { lo += 1 }
            if lo == hi { return .int(0) }  // all zeros (e.g. -0.0, 0e5)
            while hi > lo, digit(hi - 1) == 0 { hi -= 1 }
            let power = exponent - (fracEnd - fracStart) + (count - hi)
            let significant = hi - lo
            if power >= 0 {
                if significant + power <= 15 {
                    var v: Int64 = 0
                    for j in lo..<hi { v = v * 10 + digit(j) }
                    for _ in 0..<power { v *= 10 }
                    return .int(negative ? -v : v)
                }
                if significant + power > 19 { return .double(d) }  // ≥ 10^19: never an Int64
                exact = false
                if let v = Int64(exactly: d) { return .int(v) }
                return .double(d)
            }
            // Not integral in the text.
            if d == d.rounded() {
                exact = false  // precision loss or underflow made it integral; Foundation differs here
                if let v = Int64(exactly: d) { return .int(v) }
            }
            return .double(d)
        }

        func double(_ start: Int) throws -> Double {
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
            guard let d = Double(text), d.isFinite else { throw fail("number out of range", at: start) }
            return d
        }
    }
}
