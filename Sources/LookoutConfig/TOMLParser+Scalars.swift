// Numbers (integers in four bases, floats) and dates/times.

extension TOMLParserState {
    /// A number, date, date-time or time, starting at the cursor.
    mutating func parseNumberOrDate() throws(ConfigError) -> TOMLValue {
        let startLine = line
        let startColumn = column
        var token: [Unicode.Scalar] = []
        func isTokenScalar(_ c: Unicode.Scalar) -> Bool {
            TOMLCharacters.isBareKey(c) || c == "+" || c == "." || c == ":"
        }
        while let c = peek(), isTokenScalar(c) {
            token.append(c)
            advance()
        }
        // A date followed by a space and a time: `1979-05-27 07:32:00`.
        if token.count == 10, Self.isDate(token), peek() == " ",
            let h1 = peek(1), let h2 = peek(2), TOMLCharacters.isDigit(h1), TOMLCharacters.isDigit(h2),
            peek(3) == ":"
        {
            token.append("T")
            advance()
            while let c = peek(), isTokenScalar(c) {
                token.append(c)
                advance()
            }
        }
        let fileName = self.fileName
        let fail = { (message: String) in
            ConfigError(file: fileName, line: startLine, column: startColumn, message: message)
        }
        let shown = hideValues ? "(value hidden)" : String(String.UnicodeScalarView(token))
        if token.contains(":") || (token.count >= 10 && Self.isDate(Array(token.prefix(10)))) {
            return .datetime(try Self.normalizeDateTime(token, shown: shown, fail: fail))
        }
        return try Self.parseNumber(token, shown: shown, fail: fail)
    }

    // MARK: Numbers

    /// Parses a number token; `text` is how the token appears in messages.
    static func parseNumber(
        _ token: [Unicode.Scalar], shown text: String, fail: (String) -> ConfigError
    ) throws(ConfigError) -> TOMLValue {
        var body = token[...]
        var negative = false
        var signed = false
        if let first = body.first, first == "+" || first == "-" {
            negative = first == "-"
            signed = true
            body = body.dropFirst()
        }
        let bodyText = String(String.UnicodeScalarView(body))
        if bodyText == "inf" { return .float(negative ? -.infinity : .infinity) }
        if bodyText == "nan" { return .float(negative ? -Double.nan : .nan) }
        guard let firstDigit = body.first, TOMLCharacters.isDigit(firstDigit) else {
            if !signed, let first = token.first, TOMLCharacters.isBareKey(first) {
                throw fail("expected a value, found unquoted text \(text); strings must be in quotes")
            }
            throw fail("invalid number \(text)")
        }

        if body.count > 2, firstDigit == "0", let prefix = body.dropFirst().first, "xob".unicodeScalars.contains(prefix)
        {
            let radix = prefix == "x" ? 16 : prefix == "o" ? 8 : 2
            let name = prefix == "x" ? "hexadecimal" : prefix == "o" ? "octal" : "binary"
            if signed { throw fail("a sign is not allowed on a \(name) integer: \(text)") }
            let digits = body.dropFirst(2)
            let isDigit: (Unicode.Scalar) -> Bool = {
                radix == 16 ? TOMLCharacters.isHexDigit($0) : ($0.value >= 48 && $0.value < 48 + UInt32(radix))
            }
            guard let cleaned = Self.removeUnderscores(digits, isDigit: isDigit), !cleaned.isEmpty,
                cleaned.allSatisfy(isDigit)
            else { throw fail("invalid \(name) integer \(text)") }
            guard let value = Int64(String(String.UnicodeScalarView(cleaned)), radix: radix) else {
                throw fail("integer \(text) does not fit in 64 bits")
            }
            return .integer(value)
        }

        guard let cleaned = Self.removeUnderscores(body, isDigit: TOMLCharacters.isDigit) else {
            throw fail("invalid number \(text): an underscore must be between two digits")
        }
        // Split into integer part, fraction and exponent and check each.
        var intPart: [Unicode.Scalar] = []
        var i = 0
        while i < cleaned.count, TOMLCharacters.isDigit(cleaned[i]) {
            intPart.append(cleaned[i])
            i += 1
        }
        var isFloat = false
        if i < cleaned.count, cleaned[i] == "." {
            isFloat = true
            i += 1
            var fraction = 0
            while i < cleaned.count, TOMLCharacters.isDigit(cleaned[i]) {
                fraction += 1
                i += 1
            }
            if fraction == 0 { throw fail("invalid float \(text): a digit must follow the decimal point") }
        }
        if i < cleaned.count, cleaned[i] == "e" || cleaned[i] == "E" {
            isFloat = true
            i += 1
            if i < cleaned.count, cleaned[i] == "+" || cleaned[i] == "-" { i += 1 }
            var exponent = 0
            while i < cleaned.count, TOMLCharacters.isDigit(cleaned[i]) {
                exponent += 1
                i += 1
            }
            if exponent == 0 { throw fail("invalid float \(text): the exponent needs digits") }
        }
        if i != cleaned.count { throw fail("invalid number \(text)") }
        if intPart.count > 1 && intPart[0] == "0" {
            throw fail("invalid number \(text): leading zeros are not allowed")
        }
        let plain = String(String.UnicodeScalarView(cleaned))
        if isFloat {
            guard let value = Double(plain), value.isFinite else {
                throw fail("float \(text) is out of range")
            }
            return .float(negative ? -value : value)
        }
        var magnitude: UInt64 = 0
        for digit in cleaned {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit.value - 48))
            if overflow1 || overflow2 { throw fail("integer \(text) does not fit in 64 bits") }
            magnitude = sum
        }
        if negative {
            if magnitude == UInt64(Int64.max) + 1 { return .integer(.min) }
            guard magnitude <= UInt64(Int64.max) else { throw fail("integer \(text) does not fit in 64 bits") }
            return .integer(-Int64(magnitude))
        }
        guard magnitude <= UInt64(Int64.max) else { throw fail("integer \(text) does not fit in 64 bits") }
        return .integer(Int64(magnitude))
    }

    /// The scalars without underscores, or `nil` if an underscore is not between two digits.
    static func removeUnderscores(
        _ scalars: ArraySlice<Unicode.Scalar>, isDigit: (Unicode.Scalar) -> Bool
    ) -> [Unicode.Scalar]? {
        let array = Array(scalars)
        var out: [Unicode.Scalar] = []
        for (i, c) in array.enumerated() {
            if c == "_" {
                guard i > 0, i + 1 < array.count, isDigit(array[i - 1]), isDigit(array[i + 1]) else { return nil }
            } else {
                out.append(c)
            }
        }
        return out
    }

    // MARK: Dates and times

    /// `YYYY-MM-DD` with digits in the right places.
    static func isDate(_ s: [Unicode.Scalar]) -> Bool {
        guard s.count == 10, s[4] == "-", s[7] == "-" else { return false }
        return [0, 1, 2, 3, 5, 6, 8, 9].allSatisfy { TOMLCharacters.isDigit(s[$0]) }
    }

    /// Validates a date/time token and returns it normalized (`T` separator, `Z` for UTC).
    /// `text` is how the token appears in messages.
    static func normalizeDateTime(
        _ s: [Unicode.Scalar], shown text: String, fail: (String) -> ConfigError
    ) throws(ConfigError) -> String {
        func number(_ range: Range<Int>) -> Int {
            s[range].reduce(0) { $0 * 10 + Int($1.value - 48) }
        }
        var out = ""
        var rest = s[...]
        if s.count >= 10, isDate(Array(s.prefix(10))) {
            let year = number(0..<4)
            let month = number(5..<7)
            let day = number(8..<10)
            guard (1...12).contains(month) else { throw fail("invalid date \(text): month \(month) is out of range") }
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
            guard (1...days).contains(day) else { throw fail("invalid date \(text): day \(day) is out of range") }
            out = String(String.UnicodeScalarView(s.prefix(10)))
            rest = s.dropFirst(10)
            if rest.isEmpty { return out }
            guard let separator = rest.first, separator == "T" || separator == "t" else {
                throw fail("invalid date-time \(text)")
            }
            out += "T"
            rest = rest.dropFirst()
        }
        // HH:MM:SS[.fraction]
        let time = Array(rest)
        guard time.count >= 8, time[2] == ":", time[5] == ":",
            [0, 1, 3, 4, 6, 7].allSatisfy({ TOMLCharacters.isDigit(time[$0]) })
        else {
            if time.count >= 5, time[2] == ":", !(time.count > 5 && time[5] == ":") {
                throw fail("invalid time in \(text): seconds are required (HH:MM:SS)")
            }
            throw fail("invalid date or time \(text)")
        }
        func timeNumber(_ at: Int) -> Int { Int(time[at].value - 48) * 10 + Int(time[at + 1].value - 48) }
        guard timeNumber(0) <= 23, timeNumber(3) <= 59, timeNumber(6) <= 60 else {
            throw fail("invalid time in \(text): hour, minute or second out of range")
        }
        out += String(String.UnicodeScalarView(time[0..<8]))
        var i = 8
        if i < time.count, time[i] == "." {
            var j = i + 1
            while j < time.count, TOMLCharacters.isDigit(time[j]) { j += 1 }
            guard j > i + 1 else { throw fail("invalid time in \(text): a digit must follow the decimal point") }
            out += String(String.UnicodeScalarView(time[i..<j]))
            i = j
        }
        if i == time.count { return out }
        // Offset: Z or ±HH:MM, only after a full date.
        guard out.count > 10 else { throw fail("invalid time \(text): a local time cannot have an offset") }
        if (time[i] == "Z" || time[i] == "z") && i + 1 == time.count { return out + "Z" }
        let offset = Array(time[i...])
        guard offset.count == 6, offset[0] == "+" || offset[0] == "-", offset[3] == ":",
            [1, 2, 4, 5].allSatisfy({ TOMLCharacters.isDigit(offset[$0]) })
        else { throw fail("invalid date-time \(text): the offset must be Z or ±HH:MM") }
        let hours = Int(offset[1].value - 48) * 10 + Int(offset[2].value - 48)
        let minutes = Int(offset[4].value - 48) * 10 + Int(offset[5].value - 48)
        guard hours <= 23, minutes <= 59 else { throw fail("invalid date-time \(text): offset out of range") }
        return out + String(String.UnicodeScalarView(offset))
    }
}
