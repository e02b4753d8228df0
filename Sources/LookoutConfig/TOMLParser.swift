/// A TOML 1.0 parser that keeps the source position of every key.
///
/// Usage: `let table = try TOMLParser.parse(text, fileName: "config.toml")`. Errors are
/// `ConfigError`s carrying the line and column of the problem.
public enum TOMLParser {
    /// Parses a whole TOML document into its root table.
    ///
    /// - Parameters:
    ///   - text: the document.
    ///   - fileName: display name put into errors (`nil` leaves it out).
    /// - Throws: `ConfigError` with line and column for any syntax or redefinition error.
    public static func parse(_ text: String, fileName: String? = nil) throws(ConfigError) -> TOMLTable {
        var parser = TOMLParserState(text: text, fileName: fileName)
        return try parser.parseDocument()
    }

    /// Parses a dotted key written in TOML syntax (`scripts."alerts.lua".trusted`) into its
    /// components; `nil` if it is not a valid key. An empty or blank string gives `[]`.
    public static func parseKeyPath(_ text: String) -> [String]? {
        var parser = TOMLParserState(text: text, fileName: nil)
        parser.skipWhitespace()
        if parser.atEnd { return [] }
        guard let parts = try? parser.parseKey() else { return nil }
        parser.skipWhitespace()
        return parser.atEnd ? parts.map(\.name) : nil
    }
}

/// The parser's cursor and grammar. One instance parses one document.
struct TOMLParserState {
    let scalars: [Unicode.Scalar]
    let fileName: String?
    var index = 0
    /// The 1-based line of the cursor, used in error positions.
    public var line = 1
    var lineStart = 0
    /// Nesting depth of arrays and inline tables, bounded to keep the stack safe.
    var depth = 0
    static let maximumDepth = 100
    /// Set while parsing the value of a key that looks like a secret (`password`, `secret_env`…):
    /// error messages then do not quote the text of the value.
    var hideValues = false

    init(text: String, fileName: String?) {
        var scalars = Array(text.unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        self.scalars = scalars
        self.fileName = fileName
    }

    // MARK: Cursor

    var atEnd: Bool { index >= scalars.count }
    var column: Int { index - lineStart + 1 }

    func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        let i = index + offset
        return i < scalars.count ? scalars[i] : nil
    }

    mutating func advance(_ count: Int = 1) {
        for _ in 0..<count where index < scalars.count {
            if scalars[index] == "\n" {
                line += 1
                lineStart = index + 1
            }
            index += 1
        }
    }

    /// Whether the next scalars spell `text` exactly.
    func looksAt(_ text: String) -> Bool {
        var offset = 0
        for c in text.unicodeScalars {
            guard peek(offset) == c else { return false }
            offset += 1
        }
        return true
    }

    func error(_ message: String, line: Int? = nil, column: Int? = nil) -> ConfigError {
        ConfigError(file: fileName, line: line ?? self.line, column: column ?? self.column, message: message)
    }

    mutating func skipWhitespace() {
        while let c = peek(), c == " " || c == "\t" { advance() }
    }

    /// Consumes a newline (`\n` or `\r\n`) if one is next; a lone `\r` is an error.
    mutating func consumeNewline() throws(ConfigError) -> Bool {
        if peek() == "\n" {
            advance()
            return true
        }
        if peek() == "\r" {
            guard peek(1) == "\n" else { throw error("a carriage return must be followed by a line feed") }
            advance(2)
            return true
        }
        return false
    }

    /// Consumes `# …` up to (not including) the end of the line.
    mutating func skipComment() throws(ConfigError) {
        guard peek() == "#" else { return }
        advance()
        while let c = peek(), c != "\n" {
            if c == "\r" && peek(1) == "\n" { break }
            if TOMLCharacters.isForbiddenControl(c) {
                throw error("\(TOMLCharacters.describe(c)) is not allowed in a comment")
            }
            advance()
        }
    }

    /// After a key/value pair or a header: optional whitespace and comment, then end of line.
    mutating func expectLineEnd(after what: String) throws(ConfigError) {
        skipWhitespace()
        try skipComment()
        if atEnd { return }
        if try consumeNewline() { return }
        throw error("expected the end of the line after \(what), found \(TOMLCharacters.describe(peek()))")
    }

    /// Skips whitespace, comments and newlines (inside arrays).
    mutating func skipBlank() throws(ConfigError) {
        while true {
            skipWhitespace()
            if peek() == "#" {
                try skipComment()
            } else if try !consumeNewline() {
                return
            }
        }
    }

    // MARK: Document

    mutating func parseDocument() throws(ConfigError) -> TOMLTable {
        let root = TOMLTableBuilder(origin: .root)
        var current = root
        while true {
            skipWhitespace()
            guard let c = peek() else { break }
            if c == "#" {
                try skipComment()
                try expectLineEnd(after: "a comment")
            } else if try consumeNewline() {
                continue
            } else if c == "[" {
                current = try parseHeader(root: root)
                try expectLineEnd(after: "a table header")
            } else {
                try parseKeyValue(into: current)
                try expectLineEnd(after: "a value")
            }
        }
        return root.freeze()
    }

    // MARK: Keys

    /// A simple or dotted key: `a`, `"quoted key"`, `'literal'`, `a.b."c d"`.
    mutating func parseKey() throws(ConfigError) -> [TOMLKeyPart] {
        var parts: [TOMLKeyPart] = []
        while true {
            skipWhitespace()
            parts.append(try parseSimpleKey())
            skipWhitespace()
            guard peek() == "." else { return parts }
            advance()
        }
    }

    mutating func parseSimpleKey() throws(ConfigError) -> TOMLKeyPart {
        let startLine = line
        let startColumn = column
        guard let c = peek() else { throw error("expected a key, found end of file") }
        let name: String
        if c == "\"" {
            if looksAt("\"\"\"") { throw error("a key cannot be a multi-line string") }
            name = try parseBasicString()
        } else if c == "'" {
            if looksAt("'''") { throw error("a key cannot be a multi-line string") }
            name = try parseLiteralString()
        } else if TOMLCharacters.isBareKey(c) {
            var text = String.UnicodeScalarView()
            while let c = peek(), TOMLCharacters.isBareKey(c) {
                text.append(c)
                advance()
            }
            name = String(text)
        } else if c == "=" {
            throw error("missing key before '='")
        } else {
            throw error(
                "expected a key, found \(TOMLCharacters.describe(c)); keys are bare (A-Z a-z 0-9 _ -) or quoted")
        }
        return TOMLKeyPart(name: name, line: startLine, column: startColumn)
    }

    // MARK: Key/value pairs

    mutating func parseKeyValue(into table: TOMLTableBuilder) throws(ConfigError) {
        let key = try parseKey()
        skipWhitespace()
        guard peek() == "=" else {
            let written = ConfigWording.keyPath(key.map(\.name))
            throw error("expected '=' after the key \(written), found \(TOMLCharacters.describe(peek()))")
        }
        advance()
        skipWhitespace()
        let valueLine = line
        let valueColumn = column
        let outerHideValues = hideValues
        let name = key[key.count - 1].name
        hideValues = hideValues || HostConfigSecrets.isSecretName(name) || HostConfigSecrets.referenceKind(name) != nil
        defer { hideValues = outerHideValues }
        let value = try parseValue()
        try insert(value, at: key, into: table, valueLine: valueLine, valueColumn: valueColumn)
    }
}
