import Foundation

/// The one strict, single-pass JSON parser, producing ``JSONValue`` trees straight from UTF-8
/// bytes (RFC 8259: no comments, no trailing commas, no leading zeros, no BOM, no unescaped
/// control characters, surrogate pairs must be paired, input must be valid UTF-8, numbers beyond
/// `Double`'s range are errors, nesting is limited to ``Options/maxDepth``).
///
/// Use the static `parse` functions for a whole document. A single-pass decoder that wants to
/// walk a document without building the tree (Signal K's delta decoder) uses a parser value as a
/// cursor: ``position``, ``skipWhitespace()``, ``parseValue()``, ``parseString()``,
/// ``enterContainer()`` / ``leaveContainer()`` and ``error(_:at:)``.
public struct JSONParser {
    /// How numbers become ``JSONValue/int(_:)`` or ``JSONValue/double(_:)``.
    public enum Numbers: Sendable {
        /// An integral number that fits `Int64` becomes `.int` whatever its spelling (`1.0`,
        /// `1e3`), as Foundation's `JSONDecoder` + `JSONValue.init(from:)` and JavaScript see it.
        case integral
        /// As written: `.int` only for digits without fraction or exponent that fit `Int64`
        /// (`45500`), `.double` for anything else (`45500.0`), as Signal K keeps them.
        case asWritten
    }

    /// What the parser accepts and builds.
    public struct Options: Sendable {
        /// How numbers are classified.
        public var numbers: Numbers
        /// The deepest nesting of arrays and objects accepted.
        public var maxDepth: Int
        /// Creates options.
        public init(numbers: Numbers = .integral, maxDepth: Int = JSONParser.defaultMaxDepth) {
            self.numbers = numbers
            self.maxDepth = maxDepth
        }
    }

    /// The default nesting limit (256).
    public static let defaultMaxDepth = 256

    /// Parses one JSON text (any value, surrounded by optional whitespace).
    public static func parse(_ bytes: UnsafeRawBufferPointer, options: Options = Options()) throws -> JSONValue {
        var parser = JSONParser(bytes: bytes.bindMemory(to: UInt8.self), options: options)
        return try parser.parseDocument()
    }

    /// Parses `data`.
    public static func parse(_ data: Data, options: Options = Options()) throws -> JSONValue {
        try data.withUnsafeBytes { try parse($0, options: options) }
    }

    /// Parses a byte array.
    public static func parse(_ bytes: [UInt8], options: Options = Options()) throws -> JSONValue {
        try bytes.withUnsafeBytes { try parse($0, options: options) }
    }

    /// Parses the UTF-8 of `text`.
    public static func parse(_ text: String, options: Options = Options()) throws -> JSONValue {
        var text = text
        return try text.withUTF8 { try parse(UnsafeRawBufferPointer($0), options: options) }
    }

    /// Parses `data` with ``Numbers/integral`` numbers; `exact` is false when the result may
    /// differ from what Foundation's `JSONDecoder` + `JSONValue.init(from:)` would build
    /// (duplicate keys, where the last wins here; numbers whose integral-or-not reading
    /// Foundation decides differently from the text, e.g. `1.0000000000000001`, `1e18`), so the
    /// caller can fall back to `JSONDecoder`.
    public static func parseCheckingExactness(_ data: Data) throws -> (value: JSONValue, exact: Bool) {
        try data.withUnsafeBytes { raw -> (JSONValue, Bool) in
            var parser = JSONParser(bytes: raw.bindMemory(to: UInt8.self))
            let v = try parser.parseDocument()
            return (v, parser.exact)
        }
    }

    /// The input.
    public let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the next byte to read.
    public var position = 0
    /// How many arrays and objects enclose ``position``.
    public private(set) var depth = 0
    /// What the parser accepts and builds.
    public let options: Options
    /// False once something was parsed where Foundation's decoding might differ (see
    /// ``parseCheckingExactness(_:)``).
    public internal(set) var exact = true
    /// Members of the objects being parsed (innermost last), reused so each object is built
    /// with its final capacity in one go.
    var members: [(String, JSONValue)] = []
    /// Elements of the arrays being parsed (innermost last).
    var elements: [JSONValue] = []

    /// A cursor at the start of `bytes` (which must outlive it).
    public init(bytes: UnsafeBufferPointer<UInt8>, options: Options = Options()) {
        self.bytes = bytes
        self.options = options
    }

    /// An error at `offset` (default: ``position``).
    public func error(_ message: String, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(offset: offset ?? position, message: message)
    }

    /// `'c'` for a printable ASCII byte, else `byte 0xNN`, for error messages.
    public static func describe(_ c: UInt8) -> String {
        c > 0x20 && c < 0x7F ? "'\(Character(Unicode.Scalar(c)))'" : "byte 0x" + String(c, radix: 16)
    }

    /// `true` when the next byte is `c`.
    @inlinable public func at(_ c: UInt8) -> Bool { position < bytes.count && bytes[position] == c }

    /// Moves past spaces, tabs, carriage returns and line feeds.
    @inlinable public mutating func skipWhitespace() {
        while position < bytes.count {
            let c = bytes[position]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            position += 1
        }
    }

    /// Parses the whole input as one value with only whitespace around it.
    public mutating func parseDocument() throws -> JSONValue {
        skipWhitespace()
        guard position < bytes.count else { throw error("unexpected end of input (empty input)") }
        let v = try parseValue()
        skipWhitespace()
        guard position == bytes.count else { throw error("unexpected data after the JSON value") }
        return v
    }

    /// Parses the value at ``position`` (no leading whitespace).
    public mutating func parseValue() throws -> JSONValue {
        guard position < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected \(JSONParser.describe(bytes[position])), expected a value")
        }
    }

    mutating func literal(_ word: StaticString) throws {
        let start = position
        let n = word.utf8CodeUnitCount
        guard bytes.count - position >= n else { throw error("invalid literal, expected \(word)", at: start) }
        let w = word.utf8Start
        for k in 0..<n where bytes[position + k] != w[k] { throw error("invalid literal, expected \(word)", at: start) }
        position += n
    }

    /// Steps into an array or object at ``position`` (moving past its bracket), refusing nesting
    /// deeper than ``Options/maxDepth``.
    public mutating func enterContainer() throws {
        depth += 1
        guard depth <= options.maxDepth else { throw error("nesting deeper than \(options.maxDepth) levels") }
        position += 1
    }

    /// Steps out of the array or object ``enterContainer()`` entered (after its closing bracket).
    public mutating func leaveContainer() { depth -= 1 }

    mutating func object() throws -> JSONValue {
        try enterContainer()
        skipWhitespace()
        if at(UInt8(ascii: "}")) {
            position += 1; leaveContainer()
            return .object([:])
        }
        let base = members.count
        while true {
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input in an object") }
            guard bytes[position] == UInt8(ascii: "\"") else {
                throw error("unexpected \(JSONParser.describe(bytes[position])), expected a string key")
            }
            let key = try parseString()
            skipWhitespace()
            guard at(UInt8(ascii: ":")) else {
                throw error(position < bytes.count ? "expected ':' after an object key" : "unexpected end of input in an object")
            }
            position += 1
            skipWhitespace()
            let v = try parseValue()
            members.append((key, v))
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input in an object") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "}") { position += 1; break }
            throw error("unexpected \(JSONParser.describe(bytes[position])), expected ',' or '}'")
        }
        var object = [String: JSONValue](minimumCapacity: members.count - base)
        for k in base..<members.count {
            let (key, v) = members[k]
            if object.updateValue(v, forKey: key) != nil { exact = false }
        }
        members.removeSubrange(base...)
        leaveContainer()
        return .object(object)
    }

    mutating func array() throws -> JSONValue {
        try enterContainer()
        skipWhitespace()
        if at(UInt8(ascii: "]")) {
            position += 1; leaveContainer()
            return .array([])
        }
        let base = elements.count
        while true {
            skipWhitespace()
            let v = try parseValue()
            elements.append(v)
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input in an array") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "]") { position += 1; break }
            throw error("unexpected \(JSONParser.describe(bytes[position])), expected ',' or ']'")
        }
        let items = Array(elements[base...])
        elements.removeSubrange(base...)
        leaveContainer()
        return .array(items)
    }
}

extension JSONValue {
    /// Parses one JSON text with ``JSONParser`` (default options: integral numbers are `.int`).
    public static func parse(_ data: Data) throws -> JSONValue { try JSONParser.parse(data) }

    /// Parses the UTF-8 of `text` with ``JSONParser`` (default options).
    public static func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }
}
