extension JSONParser {
    /// Parses the string whose opening quote is at ``position``, unescaping it; refuses
    /// unescaped control characters, unpaired surrogates and invalid UTF-8.
    public mutating func parseString() throws -> String {
        let open = position
        position += 1
        let start = position
        var ascii = true
        // Fast scan: no escapes.
        while position < bytes.count {
            let c = bytes[position]
            if c == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                if ascii { return String(decoding: slice, as: UTF8.self) }
                guard let s = String(validating: slice, as: UTF8.self) else {
                    throw error("invalid UTF-8 in a string", at: JSONParser.firstInvalidUTF8(slice, base: start))
                }
                return s
            }
            if c == UInt8(ascii: "\\") { break }
            if c < 0x20 { throw error("unescaped control character \(JSONParser.describe(c)) in a string") }
            if c >= 0x80 { ascii = false }
            position += 1
        }
        guard position < bytes.count else { throw error("unterminated string", at: open) }
        // Slow path with escapes.
        var buffer: [UInt8] = []
        buffer.reserveCapacity(position - start + 16)
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while true {
            guard position < bytes.count else { throw error("unterminated string", at: open) }
            let c = bytes[position]
            if c == UInt8(ascii: "\"") { position += 1; break }
            if c < 0x20 { throw error("unescaped control character \(JSONParser.describe(c)) in a string") }
            if c >= 0x80 { ascii = false }
            if c != UInt8(ascii: "\\") { buffer.append(c); position += 1; continue }
            let escape = position
            position += 1
            guard position < bytes.count else { throw error("unterminated string", at: open) }
            let e = bytes[position]
            position += 1
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
                    guard bytes.count - position >= 6, bytes[position] == UInt8(ascii: "\\"),
                        bytes[position + 1] == UInt8(ascii: "u")
                    else {
                        throw error("unpaired high surrogate \\u\(String(scalar, radix: 16, uppercase: true))", at: escape)
                    }
                    let low = position
                    position += 2
                    let second = try hex4(low)
                    guard second >= 0xDC00 && second <= 0xDFFF else {
                        throw error("high surrogate not followed by a low surrogate", at: escape)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (second - 0xDC00)
                } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                    throw error("unpaired low surrogate \\u\(String(scalar, radix: 16, uppercase: true))", at: escape)
                }
                JSONParser.appendUTF8(scalar, to: &buffer)
            default:
                throw error("invalid escape \\\(Character(Unicode.Scalar(e)))", at: escape)
            }
        }
        if ascii { return String(decoding: buffer, as: UTF8.self) }
        guard let s = String(validating: buffer, as: UTF8.self) else {
            throw error("invalid UTF-8 in a string", at: open)
        }
        return s
    }

    mutating func hex4(_ escape: Int) throws -> UInt32 {
        guard bytes.count - position >= 4 else { throw error("truncated \\u escape", at: escape) }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[position]
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in a \\u escape", at: escape)
            }
            v = v << 4 | UInt32(d)
            position += 1
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
}
