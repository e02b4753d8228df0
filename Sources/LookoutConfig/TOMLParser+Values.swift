// Values: dispatch, strings, arrays and inline tables. Numbers and dates are in
// TOMLParser+Scalars.swift.

extension TOMLParserState {
    /// Any value, starting at the cursor.
    mutating func parseValue() throws(ConfigError) -> TOMLValue {
        guard let c = peek() else { throw error("expected a value, found end of file") }
        switch c {
        case "\"":
            return .string(looksAt("\"\"\"") ? try parseMultilineBasicString() : try parseBasicString())
        case "'":
            return .string(looksAt("'''") ? try parseMultilineLiteralString() : try parseLiteralString())
        case "[":
            return try parseArray()
        case "{":
            return try parseInlineTable()
        case "\n", "\r", "#":
            throw error("expected a value, found \(TOMLCharacters.describe(c))")
        default:
            if looksAt("true") || looksAt("false") {
                let word = looksAt("true") ? "true" : "false"
                let after = peek(word.unicodeScalars.count)
                if after == nil || !TOMLCharacters.isBareKey(after!) {
                    advance(word.unicodeScalars.count)
                    return .boolean(word == "true")
                }
            }
            if TOMLCharacters.isDigit(c) || c == "+" || c == "-" || looksAt("inf") || looksAt("nan") {
                return try parseNumberOrDate()
            }
            if TOMLCharacters.isBareKey(c) {
                var word = String.UnicodeScalarView()
                var offset = 0
                while let next = peek(offset), TOMLCharacters.isBareKey(next) || ":/.".unicodeScalars.contains(next) {
                    word.append(next)
                    offset += 1
                }
                let text = hideValues ? "(value hidden)" : String(word)
                if ["True", "TRUE", "False", "FALSE"].contains(String(word)) {
                    throw error("expected a value, found \(text); booleans are written true and false")
                }
                throw error("expected a value, found unquoted text \(text); strings must be in quotes")
            }
            throw error("expected a value, found \(TOMLCharacters.describe(c))")
        }
    }

    // MARK: Strings

    /// `"…"` with escapes; the cursor is on the opening quote.
    mutating func parseBasicString() throws(ConfigError) -> String {
        let startLine = line
        let startColumn = column
        advance()
        var text = String.UnicodeScalarView()
        while true {
            guard let c = peek() else {
                throw error("unterminated string (opened here)", line: startLine, column: startColumn)
            }
            switch c {
            case "\"":
                advance()
                return String(text)
            case "\\":
                text.append(try parseEscape())
            case "\n", "\r":
                throw error(
                    "newline in a single-line string; close the quote, or use \"\"\" for a multi-line string")
            default:
                if TOMLCharacters.isForbiddenControl(c) {
                    throw error("\(TOMLCharacters.describe(c)) must be escaped in a string")
                }
                text.append(c)
                advance()
            }
        }
    }

    /// `'…'` verbatim; the cursor is on the opening quote.
    mutating func parseLiteralString() throws(ConfigError) -> String {
        let startLine = line
        let startColumn = column
        advance()
        var text = String.UnicodeScalarView()
        while true {
            guard let c = peek() else {
                throw error("unterminated string (opened here)", line: startLine, column: startColumn)
            }
            switch c {
            case "'":
                advance()
                return String(text)
            case "\n", "\r":
                throw error(
                    "newline in a single-line string; close the quote, or use ''' for a multi-line string")
            default:
                if TOMLCharacters.isForbiddenControl(c) {
                    throw error("\(TOMLCharacters.describe(c)) is not allowed in a literal string")
                }
                text.append(c)
                advance()
            }
        }
    }

    /// `"""…"""`: escapes, line-ending backslashes, a newline right after the opening quotes is
    /// dropped, newlines are normalized to `\n`.
    mutating func parseMultilineBasicString() throws(ConfigError) -> String {
        try parseMultiline(quote: "\"", escapes: true)
    }

    /// `'''…'''`: verbatim, a newline right after the opening quotes is dropped.
    mutating func parseMultilineLiteralString() throws(ConfigError) -> String {
        try parseMultiline(quote: "'", escapes: false)
    }

    private mutating func parseMultiline(quote: Unicode.Scalar, escapes: Bool) throws(ConfigError) -> String {
        let startLine = line
        let startColumn = column
        advance(3)
        _ = try consumeNewline()
        var text = String.UnicodeScalarView()
        while true {
            guard let c = peek() else {
                throw error("unterminated multi-line string (opened here)", line: startLine, column: startColumn)
            }
            if c == quote {
                var run = 0
                while peek(run) == quote { run += 1 }
                if run >= 3 {
                    if run > 5 {
                        throw error("too many quotes at the end of a multi-line string")
                    }
                    for _ in 0..<(run - 3) { text.append(quote) }
                    advance(run)
                    return String(text)
                }
                for _ in 0..<run { text.append(quote) }
                advance(run)
            } else if c == "\n" || c == "\r" {
                _ = try consumeNewline()
                text.append("\n")
            } else if c == "\\" && escapes {
                if isLineEndingBackslash() {
                    advance()
                    while true {
                        skipWhitespace()
                        if try !consumeNewline() { break }
                    }
                } else {
                    text.append(try parseEscape())
                }
            } else {
                if TOMLCharacters.isForbiddenControl(c) {
                    throw error("\(TOMLCharacters.describe(c)) is not allowed in a string")
                }
                text.append(c)
                advance()
            }
        }
    }

    /// At a backslash followed only by spaces/tabs up to the end of the line.
    private func isLineEndingBackslash() -> Bool {
        var offset = 1
        while let c = peek(offset), c == " " || c == "\t" { offset += 1 }
        return peek(offset) == "\n" || (peek(offset) == "\r" && peek(offset + 1) == "\n")
    }

    /// One escape sequence; the cursor is on the backslash.
    private mutating func parseEscape() throws(ConfigError) -> Unicode.Scalar {
        let escapeLine = line
        let escapeColumn = column
        advance()
        guard let c = peek() else { throw error("unterminated escape sequence at end of file") }
        advance()
        switch c {
        case "b": return "\u{08}"
        case "t": return "\t"
        case "n": return "\n"
        case "f": return "\u{0C}"
        case "r": return "\r"
        case "\"": return "\""
        case "\\": return "\\"
        case "u", "U":
            let width = c == "u" ? 4 : 8
            var digits = ""
            for offset in 0..<width {
                guard let d = peek(offset), TOMLCharacters.isHexDigit(d) else {
                    throw error(
                        "\\\(c) must be followed by \(width) hex digits", line: escapeLine, column: escapeColumn)
                }
                digits.unicodeScalars.append(d)
            }
            advance(width)
            guard let code = UInt32(digits, radix: 16), let scalar = Unicode.Scalar(code) else {
                let shown = hideValues ? "(value hidden)" : "\\\(c)\(digits)"
                throw error("\(shown) is not a Unicode scalar value", line: escapeLine, column: escapeColumn)
            }
            return scalar
        default:
            let shown =
                hideValues
                ? "(value hidden)"
                : TOMLCharacters.isForbiddenControl(c) || c == "\n" || c == "\r" || c == " "
                    ? "\\ followed by \(TOMLCharacters.describe(c))" : "\\\(Character(c))"
            throw error(
                "invalid escape sequence \(shown); valid escapes are \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX",
                line: escapeLine, column: escapeColumn)
        }
    }

    // MARK: Arrays and inline tables

    private mutating func enterNesting() throws(ConfigError) {
        depth += 1
        if depth > Self.maximumDepth {
            throw error("arrays and inline tables are nested more than \(Self.maximumDepth) levels deep")
        }
    }

    /// `[ v, v, … ]`, across lines, with comments and an optional trailing comma.
    mutating func parseArray() throws(ConfigError) -> TOMLValue {
        let startLine = line
        let startColumn = column
        try enterNesting()
        defer { depth -= 1 }
        advance()
        var elements: [TOMLValue] = []
        while true {
            try skipBlank()
            if peek() == "]" {
                advance()
                return .array(elements)
            }
            if atEnd { throw error("array is not closed (opened here)", line: startLine, column: startColumn) }
            if peek() == "," { throw error("expected a value in the array, found ','") }
            elements.append(try parseValue())
            try skipBlank()
            switch peek() {
            case ",": advance()
            case "]":
                advance()
                return .array(elements)
            case nil:
                throw error("array is not closed (opened here)", line: startLine, column: startColumn)
            default:
                throw error("expected ',' or ']' in the array, found \(TOMLCharacters.describe(peek()))")
            }
        }
    }

    /// `{ k = v, … }` on one line (TOML 1.0: no newlines, no trailing comma).
    mutating func parseInlineTable() throws(ConfigError) -> TOMLValue {
        try enterNesting()
        defer { depth -= 1 }
        advance()
        let table = TOMLTableBuilder(origin: .inline)
        skipWhitespace()
        if peek() == "}" {
            advance()
            return .table(table.freeze())
        }
        while true {
            skipWhitespace()
            if peek() == "\n" || peek() == "\r" || atEnd {
                throw error(
                    "an inline table must be on one line; use a [table] section for longer tables")
            }
            if peek() == "}" { throw error("trailing comma is not allowed in an inline table") }
            try parseKeyValue(into: table)
            skipWhitespace()
            switch peek() {
            case ",": advance()
            case "}":
                advance()
                return .table(table.freeze())
            case "\n", "\r", nil:
                throw error(
                    "an inline table must be closed with '}' on the same line; use a [table] section for longer tables")
            default:
                throw error("expected ',' or '}' in the inline table, found \(TOMLCharacters.describe(peek()))")
            }
        }
    }
}
