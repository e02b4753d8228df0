import Foundation
import LookoutWire

// Single-pass decoding of documents: each object's fields are walked once, straight from the
// body's bytes with LookoutWire's `JSONParser` as a cursor, and each field is switched on by its
// name (length, then bytes) to set the model's property. The tree path (`JSONParser` builds a
// dictionary per document, then `DocumentReader` looks every known name up in it, hashing each
// name again) gives the same models; it remains the path for everything this one refuses
// (`DocumentScanFallback`), so results and errors stay exactly those of `JSONDecoder`.

/// Thrown by a single-pass decode where only the tree path decides the result exactly: a name
/// given twice in a document, a document that is not an object, an envelope of another shape.
/// The caller then decodes the body through the tree path (`V3ParsedResponse`).
struct DocumentScanFallback: Error {}

/// A model that a HISTORY page decodes in one pass (`V3PageScanner`).
protocol ScannableDocument: NightscoutDocument {
    /// Decodes the object at `parser`'s position (its `{`) to exactly the value `init(from:)`
    /// builds from the parsed tree, unknown fields kept in `extra`.
    /// - Throws: `DocumentScanFallback` where the tree path must decide; `JSONParseError` for
    ///   malformed JSON.
    static func scan(_ parser: inout JSONParser) throws -> Self
}

/// The UTF-8 of a field name, unescaped.
typealias FieldName = UnsafeBufferPointer<UInt8>

extension UnsafeBufferPointer where Element == UInt8 {
    /// Whether the bytes are exactly `name`'s UTF-8.
    @inline(__always) func equals(_ name: StaticString) -> Bool {
        count == name.utf8CodeUnitCount && (count == 0 || memcmp(baseAddress!, name.utf8Start, count) == 0)
    }
}

/// Which known fields a document gave so far, to refuse a name given twice.
struct SeenFields {
    private var bits: UInt64 = 0

    /// Records field number `n` (0…63).
    /// - Throws: `DocumentScanFallback` when it was seen before.
    @inline(__always) mutating func insert(_ n: Int) throws {
        let bit: UInt64 = 1 << UInt64(n)
        guard bits & bit == 0 else { throw DocumentScanFallback() }
        bits |= bit
    }
}

extension JSONParser {
    /// Walks the members of the object at ``position`` (which must be `{`) once: `body` gets
    /// each name's unescaped UTF-8 (valid only during the call) with the parser at the value,
    /// and must parse the value.
    mutating func scanMembers(_ body: (inout JSONParser, FieldName) throws -> Void) throws {
        try enterContainer()
        skipWhitespace()
        if at(UInt8(ascii: "}")) {
            position += 1; leaveContainer()
            return
        }
        while true {
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input in an object") }
            guard bytes[position] == UInt8(ascii: "\"") else {
                throw error("unexpected \(JSONParser.describe(bytes[position])), expected a string key")
            }
            // Plain ASCII names are read in place; anything else goes through `parseString`.
            var end = position + 1
            var plain = false
            while end < bytes.count {
                let c = bytes[end]
                if c == UInt8(ascii: "\"") { plain = true; break }
                if c == UInt8(ascii: "\\") || c < 0x20 || c >= 0x80 { break }
                end += 1
            }
            var decoded: String? = nil
            let start = position + 1
            if plain {
                position = end + 1
            } else {
                decoded = try parseString()
            }
            skipWhitespace()
            guard at(UInt8(ascii: ":")) else {
                throw error(position < bytes.count ? "expected ':' after an object key" : "unexpected end of input in an object")
            }
            position += 1
            skipWhitespace()
            if var name = decoded {
                try name.withUTF8 { try body(&self, $0) }
            } else {
                try body(&self, UnsafeBufferPointer(rebasing: bytes[start..<end]))
            }
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input in an object") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "}") { position += 1; break }
            throw error("unexpected \(JSONParser.describe(bytes[position])), expected ',' or '}'")
        }
        leaveContainer()
    }

    /// Walks the elements of the array at ``position`` (which must be `[`) once; `body` parses
    /// each element.
    mutating func scanElements(_ body: (inout JSONParser) throws -> Void) throws {
        try enterContainer()
        skipWhitespace()
        if at(UInt8(ascii: "]")) {
            position += 1; leaveContainer()
            return
        }
        while true {
            skipWhitespace()
            try body(&self)
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input in an array") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "]") { position += 1; break }
            throw error("unexpected \(JSONParser.describe(bytes[position])), expected ',' or ']'")
        }
        leaveContainer()
    }
}

extension Dictionary where Key == String, Value == JSONValue {
    /// Keeps an unknown field (`extra`).
    /// - Throws: `DocumentScanFallback` when the name was given before.
    @inline(__always) mutating func keepUnknown(_ name: FieldName, _ value: JSONValue) throws {
        guard updateValue(value, forKey: String(decoding: name, as: UTF8.self)) == nil else { throw DocumentScanFallback() }
    }
}

extension DocumentReader {
    /// A date field's value (`DocumentReader.value(_:)` for `NightscoutDate`): epoch
    /// milliseconds or a date string; `nil` for `null` and anything that is no date.
    static func date(_ v: JSONValue) -> NightscoutDate? {
        if case .null = v { return nil }
        return try? NightscoutDate(jsonValue: v)
    }
}

extension CommonFields {
    /// The common fields by name, numbered 0…12 (`SeenFields`).
    enum Field: Int {
        case id, identifier, date, createdAt, utcOffset, app, device, srvCreated, srvModified, subject, modifiedBy,
             isValid, isReadOnly

        /// The field named `n`, if it is a common one.
        @inline(__always) init?(_ n: FieldName) {
            switch n.count {
            case 3:
                if n.equals("_id") { self = .id } else if n.equals("app") { self = .app } else { return nil }
            case 4: if n.equals("date") { self = .date } else { return nil }
            case 6: if n.equals("device") { self = .device } else { return nil }
            case 7:
                if n.equals("isValid") { self = .isValid } else if n.equals("subject") { self = .subject } else { return nil }
            case 9: if n.equals("utcOffset") { self = .utcOffset } else { return nil }
            case 10:
                switch n[0] {
                case UInt8(ascii: "i"):
                    if n.equals("identifier") { self = .identifier } else if n.equals("isReadOnly") { self = .isReadOnly } else { return nil }
                case UInt8(ascii: "c"): if n.equals("created_at") { self = .createdAt } else { return nil }
                case UInt8(ascii: "s"): if n.equals("srvCreated") { self = .srvCreated } else { return nil }
                case UInt8(ascii: "m"): if n.equals("modifiedBy") { self = .modifiedBy } else { return nil }
                default: return nil
                }
            case 11: if n.equals("srvModified") { self = .srvModified } else { return nil }
            default: return nil
            }
        }
    }

    /// Sets `field` from `v` as `init(reading:)` reads it; `false` (nothing set) when the value
    /// does not fit, so the caller keeps it in `extra`.
    mutating func set(_ field: Field, _ v: JSONValue) -> Bool {
        switch field {
        case .id: guard let s = DocumentReader.string(v) else { return false }; id = s
        case .identifier: guard let s = DocumentReader.string(v) else { return false }; identifier = s
        case .date: guard let d = DocumentReader.date(v) else { return false }; date = d
        case .createdAt: guard let d = DocumentReader.date(v) else { return false }; createdAt = d
        case .utcOffset: guard let i = DocumentReader.int(v) else { return false }; utcOffset = i
        case .app: guard let s = DocumentReader.string(v) else { return false }; app = s
        case .device: guard let s = DocumentReader.string(v) else { return false }; device = s
        case .srvCreated: guard let d = DocumentReader.date(v) else { return false }; srvCreated = d
        case .srvModified: guard let d = DocumentReader.date(v) else { return false }; srvModified = d
        case .subject: guard let s = DocumentReader.string(v) else { return false }; subject = s
        case .modifiedBy: guard let s = DocumentReader.string(v) else { return false }; modifiedBy = s
        case .isValid: guard let b = DocumentReader.bool(v) else { return false }; isValid = b
        case .isReadOnly: guard let b = DocumentReader.bool(v) else { return false }; isReadOnly = b
        }
        return true
    }
}
