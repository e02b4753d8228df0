/// Character classes of the TOML grammar.
enum TOMLCharacters {
    /// `A-Z a-z 0-9 _ -`: the characters of a bare key.
    static func isBareKey(_ c: Unicode.Scalar) -> Bool {
        switch c {
        case "A"..."Z", "a"..."z", "0"..."9", "_", "-": return true
        default: return false
        }
    }

    /// `0-9`.
    static func isDigit(_ c: Unicode.Scalar) -> Bool { ("0"..."9").contains(c) }

    /// `0-9 A-F a-f`.
    static func isHexDigit(_ c: Unicode.Scalar) -> Bool {
        switch c {
        case "0"..."9", "A"..."F", "a"..."f": return true
        default: return false
        }
    }

    /// Control characters TOML forbids in comments and strings (tab is allowed).
    static func isForbiddenControl(_ c: Unicode.Scalar) -> Bool {
        (c.value < 0x20 && c != "\t") || c.value == 0x7F
    }

    /// At least four upper-case hex digits (`000A`), for `U+XXXX` in messages.
    static func hex4(_ value: UInt32) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// How a character appears in a message: `'x'`, or a name for invisible ones.
    static func describe(_ c: Unicode.Scalar?) -> String {
        guard let c else { return "end of file" }
        switch c {
        case "\n", "\r": return "end of line"
        case " ": return "a space"
        case "\t": return "a tab"
        default:
            if c.value < 0x20 || c.value == 0x7F {
                return "control character U+" + hex4(c.value)
            }
            return "'\(Character(c))'"
        }
    }
}
