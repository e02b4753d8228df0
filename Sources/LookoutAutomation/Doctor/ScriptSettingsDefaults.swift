import Foundation
import Lua

/// The defaults a script passes to `config.settings { … }`, read from its source without running
/// it (for `lookout doctor`): plain literals (numbers, strings, booleans, lists and tables) give
/// their kind; any other expression gives a key of unknown kind (nil), which takes any value.
enum ScriptSettingsDefaults {
    /// The defaults of the first `settings { … }` call in `source`, or nil when there is none.
    static func parse(_ source: String) -> [String: LuaValue?]? {
        guard let call = source.range(of: #"settings\s*\(?\s*\{"#, options: .regularExpression) else { return nil }
        var scanner = Scanner(text: Array(source[call.upperBound...]))
        return scanner.fields()
    }

    /// A small reader of one table constructor's top level, starting after its `{`.
    private struct Scanner {
        let text: [Character]
        var i = 0

        init(text: [Character]) { self.text = text }

        mutating func fields() -> [String: LuaValue?]? {
            var result: [String: LuaValue?] = [:]
            while true {
                skipSpace()
                guard i < text.count else { return nil }
                if text[i] == "}" { return result }
                if text[i] == "," || text[i] == ";" { i += 1; continue }
                let start = i
                while i < text.count, text[i].isLetter || text[i].isNumber || text[i] == "_" { i += 1 }
                let name = String(text[start..<i])
                skipSpace()
                guard !name.isEmpty, i < text.count, text[i] == "=", i + 1 < text.count, text[i + 1] != "=" else { return nil }
                i += 1
                skipSpace()
                result[name] = value()
            }
        }

        /// The value at `i` (moving past it): its kind when it is a plain literal, else nil.
        mutating func value() -> LuaValue? {
            let start = i
            var depth = 0
            var plain = true
            var sawEquals = false
            while i < text.count {
                let c = text[i]
                if c == "\"" || c == "'" {
                    i += 1
                    while i < text.count, text[i] != c { if text[i] == "\\" { i += 1 }; i += 1 }
                    i += 1
                    continue
                }
                if c == "{" { depth += 1 } else if c == "}" {
                    if depth == 0 { break }
                    depth -= 1
                } else if depth == 0, c == "," || c == ";" { break } else if depth == 1, c == "=" { sawEquals = true }
                if c == "(" || c == "." && depth == 0 && !(text.indices.contains(i + 1) && text[i + 1].isNumber) { plain = false }
                i += 1
            }
            let literal = String(text[start..<i]).trimmingCharacters(in: .whitespacesAndNewlines)
            guard plain, let first = literal.first else { return nil }
            if first == "{" { return sawEquals ? .object([:]) : .array([]) }
            if (first == "\"" || first == "'") && literal.last == first && literal.count >= 2 { return .text("") }
            if literal == "true" || literal == "false" { return .bool(literal == "true") }
            if Double(literal) != nil || Int64(literal) != nil { return .double(0) }
            return nil
        }

        mutating func skipSpace() {
            while i < text.count {
                if text[i].isWhitespace { i += 1; continue }
                if text[i] == "-", i + 1 < text.count, text[i + 1] == "-" {  // a comment to the end of the line
                    while i < text.count, text[i] != "\n" { i += 1 }
                    continue
                }
                break
            }
        }
    }
}
