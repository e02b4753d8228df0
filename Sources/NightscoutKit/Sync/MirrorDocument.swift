import Foundation

/// One document of the local mirror: the server's JSON bytes exactly as received, plus the few
/// fields a store indexes.
///
/// The index fields are read straight from the bytes by a small scanner (`MirrorDocument.split`),
/// without decoding typed models, so a year of entries (about 105k documents) indexes quickly.
public struct MirrorDocument: Sendable, Equatable {
    /// The primary key: the v3 `identifier`, falling back to the v1 `_id`.
    public var identifier: String
    /// The event time in epoch ms: `date`, else `created_at`, else `dateString`, else `startDate`
    /// (profiles), the strings parsed with `NightscoutDate`. `nil` when none parses.
    public var date: Int64?
    /// The server's modification time (`srvModified`, epoch ms); `nil` for documents read through
    /// API v1 that never had one (the mirror stores v3's stand-in then: see
    /// `SyncManager.canonicalSrvModified`).
    public var srvModified: Int64?
    /// `false` only for soft-deleted documents (`isValid: false`).
    public var isValid: Bool
    /// The document's JSON object, byte for byte as the server sent it.
    public var raw: Data

    /// Creates a mirror document from already known index fields.
    public init(identifier: String, date: Int64?, srvModified: Int64?, isValid: Bool, raw: Data) {
        self.identifier = identifier; self.date = date; self.srvModified = srvModified
        self.isValid = isValid; self.raw = raw
    }

    /// Indexes one JSON object (e.g. a document read from a store).
    /// - Returns: `nil` when `json` is not an object with an `identifier` or `_id` string.
    /// - Throws: `NightscoutError.decoding` for malformed JSON.
    public init?(json: Data) throws {
        let bytes = [UInt8](json)
        let found = try bytes.withUnsafeBufferPointer { buffer -> MirrorDocument? in
            var scanner = JSONByteScanner(buffer)
            scanner.skipWhitespace()
            let start = scanner.index
            let doc = try scanner.scanDocument(start: start)
            scanner.skipWhitespace()
            guard scanner.atEnd else { throw NightscoutError.decoding("trailing bytes after JSON document") }
            return doc
        }
        guard let found else { return nil }
        self = found
    }

    /// Splits a v3 envelope (`{"status":200,"result":[…]}`, as SEARCH and HISTORY answer) into
    /// documents. Elements without an `identifier` or `_id` string are left out.
    /// - Throws: `NightscoutError.decoding` when the body is not such an envelope.
    public static func split(v3Envelope body: Data) throws -> [MirrorDocument] {
        try scan(body, envelope: true).documents
    }

    /// Splits a JSON array of documents (what API v1 reads answer). Elements without an
    /// `identifier` or `_id` string are left out.
    /// - Throws: `NightscoutError.decoding` when the body is not a JSON array.
    public static func split(jsonArray body: Data) throws -> [MirrorDocument] {
        try scan(body, envelope: false).documents
    }

    /// The number of elements of a v3 envelope's `result` array, read by the byte scanner (so a
    /// number beyond `Double`'s range in a document does not make the page unreadable).
    /// - Throws: `NightscoutError.decoding` when the body is not such an envelope.
    public static func elementCount(v3Envelope body: Data) throws -> Int {
        try scan(body, envelope: true).elementCount
    }

    /// The documents of `body` and the number of elements in its array (including those left out).
    static func scan(_ body: Data, envelope: Bool) throws -> (documents: [MirrorDocument], elementCount: Int) {
        let bytes = [UInt8](body)
        return try bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONByteScanner(buffer)
            scanner.skipWhitespace()
            if envelope {
                guard try scanner.seekTopLevelKey("result") else {
                    throw NightscoutError.decoding("v3 answer has no result array")
                }
            }
            return try scanner.scanDocumentArray()
        }
    }
}

/// A minimal JSON scanner over bytes: finds value boundaries (strings, nesting) without building
/// values, and reads the handful of top-level fields a mirror indexes.
struct JSONByteScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { index >= bytes.count }

    private static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
    private static let openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}")
    private static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]")
    private static let comma = UInt8(ascii: ","), colon = UInt8(ascii: ":")

    private func fail(_ what: String) -> NightscoutError {
        NightscoutError.decoding("malformed JSON at byte \(index): \(what)")
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8) throws {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { throw fail("expected '\(Character(Unicode.Scalar(byte)))'") }
        index += 1
    }

    /// Skips a string starting at the opening quote; returns the range of its content and
    /// whether it contains escapes.
    private mutating func skipString() throws -> (Range<Int>, escaped: Bool) {
        guard index < bytes.count, bytes[index] == Self.quote else { throw fail("expected string") }
        index += 1
        let start = index
        var escaped = false
        while index < bytes.count {
            let b = bytes[index]
            if b == Self.quote { index += 1; return (start..<(index - 1), escaped) }
            if b == Self.backslash { escaped = true; index += 2; continue }
            index += 1
        }
        throw fail("unterminated string")
    }

    /// Skips any value; returns its byte range.
    @discardableResult
    private mutating func skipValue() throws -> Range<Int> {
        skipWhitespace()
        guard index < bytes.count else { throw fail("expected value") }
        let start = index
        switch bytes[index] {
        case Self.quote:
            _ = try skipString()
        case Self.openBrace, Self.openBracket:
            var depth = 0
            while index < bytes.count {
                let b = bytes[index]
                if b == Self.quote { _ = try skipString(); continue }
                if b == Self.openBrace || b == Self.openBracket { depth += 1 }
                else if b == Self.closeBrace || b == Self.closeBracket {
                    depth -= 1
                    if depth == 0 { index += 1; return start..<index }
                }
                index += 1
            }
            throw fail("unterminated object or array")
        default:
            while index < bytes.count {
                switch bytes[index] {
                case Self.comma, Self.closeBrace, Self.closeBracket, 0x20, 0x09, 0x0A, 0x0D:
                    guard index > start else { throw fail("expected value") }
                    return start..<index
                default: index += 1
                }
            }
        }
        return start..<index
    }

    private func string(_ range: Range<Int>, escaped: Bool) -> String? {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        if !escaped { return String(decoding: slice, as: UTF8.self) }
        // Rare: let Foundation undo the escapes of the quoted text.
        let quoted = Data(UnsafeBufferPointer(rebasing: bytes[(range.lowerBound - 1)..<(range.upperBound + 1)]))
        return (try? JSONSerialization.jsonObject(with: quoted, options: [.fragmentsAllowed])) as? String
    }

    private func matches(_ range: Range<Int>, _ key: StaticString) -> Bool {
        guard range.count == key.utf8CodeUnitCount else { return false }
        let k = key.utf8Start
        var i = 0
        for j in range { if bytes[j] != k[i] { return false }; i += 1 }
        return true
    }

    /// A number value as integer milliseconds (fractions truncated), or `nil`.
    private func integer(_ range: Range<Int>) -> Int64? {
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        if let i = Int64(text) { return i }
        if let d = Double(text), d.isFinite, abs(d) < 9e18 { return Int64(d) }
        return nil
    }

    /// A time value: a number of epoch ms, or a string `NightscoutDate` parses.
    private func time(_ range: Range<Int>) -> Int64? {
        guard let first = range.first.map({ bytes[$0] }) else { return nil }
        if first == Self.quote {
            let inner = (range.lowerBound + 1)..<(range.upperBound - 1)
            guard let text = string(inner, escaped: bytes[inner].contains(Self.backslash)) else { return nil }
            return NightscoutDate(string: text)?.epochMilliseconds
        }
        return integer(range)
    }

    /// Moves to the value of `key` in the top-level object; `false` when the key is absent.
    mutating func seekTopLevelKey(_ key: StaticString) throws -> Bool {
        try expect(Self.openBrace)
        skipWhitespace()
        if index < bytes.count, bytes[index] == Self.closeBrace { return false }
        while true {
            skipWhitespace()
            let (name, _) = try skipString()
            try expect(Self.colon)
            skipWhitespace()
            if matches(name, key) { return true }
            try skipValue()
            skipWhitespace()
            guard index < bytes.count else { throw fail("unterminated object") }
            if bytes[index] == Self.comma { index += 1; continue }
            if bytes[index] == Self.closeBrace { return false }
            throw fail("expected ',' or '}'")
        }
    }

    /// Scans an array of documents starting at the current position.
    mutating func scanDocumentArray() throws -> (documents: [MirrorDocument], elementCount: Int) {
        try expect(Self.openBracket)
        var documents: [MirrorDocument] = []
        var count = 0
        skipWhitespace()
        if index < bytes.count, bytes[index] == Self.closeBracket { index += 1; return ([], 0) }
        while true {
            skipWhitespace()
            count += 1
            if let doc = try scanDocument(start: index) { documents.append(doc) }
            skipWhitespace()
            guard index < bytes.count else { throw fail("unterminated array") }
            if bytes[index] == Self.comma { index += 1; continue }
            if bytes[index] == Self.closeBracket { index += 1; return (documents, count) }
            throw fail("expected ',' or ']'")
        }
    }

    /// Scans one element; `nil` when it is not an object with an `identifier` or `_id` string.
    mutating func scanDocument(start: Int) throws -> MirrorDocument? {
        guard index < bytes.count, bytes[index] == Self.openBrace else {
            try skipValue()
            return nil
        }
        index += 1
        var identifier: String?, id: String?
        var date: Int64?, createdAt: Range<Int>?, dateString: Range<Int>?, startDate: Range<Int>?
        var srvModified: Int64?, isValid = true
        skipWhitespace()
        if index < bytes.count, bytes[index] == Self.closeBrace {
            index += 1
            return nil
        }
        while true {
            skipWhitespace()
            let (name, _) = try skipString()
            try expect(Self.colon)
            let value = try skipValue()
            switch name.count {
            case 3 where matches(name, "_id"):
                if bytes[value.lowerBound] == Self.quote {
                    let inner = (value.lowerBound + 1)..<(value.upperBound - 1)
                    id = string(inner, escaped: bytes[inner].contains(Self.backslash))
                }
            case 4 where matches(name, "date"):
                date = time(value)
            case 7 where matches(name, "isValid"):
                isValid = !matches(value, "false")
            case 9 where matches(name, "startDate"):
                startDate = value
            case 10 where matches(name, "created_at"):
                createdAt = value
            case 10 where matches(name, "identifier"):
                if bytes[value.lowerBound] == Self.quote {
                    let inner = (value.lowerBound + 1)..<(value.upperBound - 1)
                    identifier = string(inner, escaped: bytes[inner].contains(Self.backslash))
                }
            case 10 where matches(name, "dateString"):
                dateString = value
            case 11 where matches(name, "srvModified"):
                srvModified = time(value)
            default:
                break
            }
            skipWhitespace()
            guard index < bytes.count else { throw fail("unterminated object") }
            if bytes[index] == Self.comma { index += 1; continue }
            if bytes[index] == Self.closeBrace { index += 1; break }
            throw fail("expected ',' or '}'")
        }
        guard let key = (identifier?.isEmpty == false ? identifier : nil) ?? id, !key.isEmpty else { return nil }
        let eventTime = date ?? createdAt.flatMap(time) ?? dateString.flatMap(time) ?? startDate.flatMap(time)
        let raw = Data(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        return MirrorDocument(identifier: key, date: eventTime, srvModified: srvModified, isValid: isValid, raw: raw)
    }
}
