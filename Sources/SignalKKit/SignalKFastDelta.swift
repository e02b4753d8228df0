import Foundation
import LookoutWire

// A single-pass decoder for stream frames. It decodes the delta envelope (updates, values, meta)
// straight from the bytes without building intermediate dictionaries, and falls back to the generic
// ``JSONValue`` tree plus ``SignalKServerMessage/classify(_:)`` for every other shape. Its results equal
// `classify(SignalKJSON.parse(bytes))` (the tests check this on every fixture). It walks the bytes with
// LookoutWire's `JSONParser` as a cursor.

extension JSONParser {
    struct RawKey {
        var start: Int
        var end: Int
        var decoded: String?
    }

    mutating func parseRawKey() throws -> RawKey {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
            throw error(position < bytes.count ? "unexpected \(JSONParser.describe(bytes[position])), expected a string key" : "unexpected end of input in object")
        }
        var j = position + 1
        while j < bytes.count {
            let c = bytes[j]
            if c == UInt8(ascii: "\"") {
                let k = RawKey(start: position + 1, end: j, decoded: nil)
                position = j + 1
                return k
            }
            if c == UInt8(ascii: "\\") || c < 0x20 || c >= 0x80 { break }
            j += 1
        }
        return RawKey(start: 0, end: 0, decoded: try parseString())
    }

    func keyIs(_ k: RawKey, _ name: StaticString) -> Bool {
        if let d = k.decoded { return d == name.description }
        let n = name.utf8CodeUnitCount
        guard k.end - k.start == n else { return false }
        let p = name.utf8Start
        for x in 0..<n where bytes[k.start + x] != p[x] { return false }
        return true
    }

    func keyString(_ k: RawKey) -> String {
        k.decoded ?? String(decoding: UnsafeBufferPointer(rebasing: bytes[k.start..<k.end]), as: UTF8.self)
    }

    /// Iterates the members of the object at `position` (which must be `{`).
    mutating func forEachMember(_ body: (inout Self, RawKey) throws -> Void) throws {
        try enterContainer()
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "}") {
            position += 1; leaveContainer()
            return
        }
        while true {
            skipWhitespace()
            let key = try parseRawKey()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                throw error(position < bytes.count ? "expected ':' after object key" : "unexpected end of input in object")
            }
            position += 1
            skipWhitespace()
            try body(&self, key)
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input in object") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "}") { position += 1; break }
            throw error("unexpected \(JSONParser.describe(bytes[position])), expected ',' or '}'")
        }
        leaveContainer()
    }

    /// Iterates the elements of the array at `position` (which must be `[`).
    mutating func forEachElement(_ body: (inout Self, Int) throws -> Void) throws {
        try enterContainer()
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "]") {
            position += 1; leaveContainer()
            return
        }
        var n = 0
        while true {
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input in array") }
            try body(&self, n)
            n += 1
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input in array") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "]") { position += 1; break }
            throw error("unexpected \(JSONParser.describe(bytes[position])), expected ',' or ']'")
        }
        leaveContainer()
    }

    var atObject: Bool { position < bytes.count && bytes[position] == UInt8(ascii: "{") }
    var atArray: Bool { position < bytes.count && bytes[position] == UInt8(ascii: "[") }

    mutating func parseMessage() throws -> SignalKServerMessage {
        skipWhitespace()
        guard atObject else { return try SignalKServerMessage.classify(parseDocument()) }
        var others: [String: JSONValue] = [:]
        var context: JSONValue?
        var updates: [SignalKUpdate]?
        var badUpdates: JSONValue?
        try forEachMember { p, key in
            if p.keyIs(key, "updates") {
                if p.atArray {
                    updates = try p.parseUpdates()
                    badUpdates = nil
                } else {
                    badUpdates = try p.parseValue()
                    updates = nil
                }
            } else if p.keyIs(key, "context") {
                context = try p.parseValue()
            } else {
                others[p.keyString(key)] = try p.parseValue()
            }
        }
        skipWhitespace()
        if position < bytes.count { throw error("unexpected data after the JSON value") }
        if let bad = badUpdates {
            throw SignalKDecodingError.wrongType(field: "updates", expected: "array", found: bad.typeName)
        }
        guard let updates else {
            if let context { others["context"] = context }
            return try SignalKServerMessage.classify(.object(others))
        }
        var ctx: String?
        switch context {
        case nil, .null?: ctx = nil
        case .string(let s)?: ctx = s
        case let v?: throw SignalKDecodingError.wrongType(field: "context", expected: "string", found: v.typeName)
        }
        return .delta(SignalKDelta(context: ctx, updates: updates))
    }

    mutating func parseUpdates() throws -> [SignalKUpdate] {
        var out: [SignalKUpdate] = []
        try forEachElement { p, n in
            guard p.atObject else {
                let v = try p.parseValue()
                throw SignalKDecodingError.wrongType(field: "updates[\(n)]", expected: "object", found: v.typeName)
            }
            out.append(try p.parseUpdate(n))
        }
        return out
    }

    struct Entry {
        var path: String?
        var value: JSONValue?
    }

    mutating func parseUpdate(_ n: Int) throws -> SignalKUpdate {
        var update = SignalKUpdate()
        var updatePath: String?
        var values: [Entry] = []
        var metas: [Entry] = []
        func loc() -> String { "updates[\(n)]" }
        try forEachMember { p, key in
            if p.keyIs(key, "values") || p.keyIs(key, "meta") {
                let isValues = p.keyIs(key, "values")
                let field = loc() + (isValues ? ".values" : ".meta")
                guard p.atArray else {
                    let v = try p.parseValue()
                    throw SignalKDecodingError.wrongType(field: field, expected: "array", found: v.typeName)
                }
                var entries: [Entry] = []
                try p.forEachElement { p, k in
                    guard p.atObject else {
                        let v = try p.parseValue()
                        throw SignalKDecodingError.wrongType(field: field + "[\(k)]", expected: "object", found: v.typeName)
                    }
                    var e = Entry()
                    try p.forEachMember { p, key in
                        if p.keyIs(key, "path") {
                            switch try p.parseValue() {
                            case .string(let s): e.path = s
                            case .null: e.path = nil
                            case let v: throw SignalKDecodingError.wrongType(field: field + "[\(k)].path", expected: "string", found: v.typeName)
                            }
                        } else if p.keyIs(key, "value") {
                            e.value = try p.parseValue()
                        } else {
                            _ = try p.parseValue()
                        }
                    }
                    entries.append(e)
                }
                if isValues { values = entries } else { metas = entries }
            } else if p.keyIs(key, "source") {
                if p.atObject {
                    var source = SignalKSource()
                    try p.forEachMember { p, key in
                        let name = p.keyString(key)
                        let v = try p.parseValue()
                        if try !source.set(name, v, at: loc() + ".source") { source.extra[name] = v }
                    }
                    update.source = source
                } else {
                    let v = try p.parseValue()
                    guard v.isNull else {
                        throw SignalKDecodingError.wrongType(field: loc() + ".source", expected: "object", found: v.typeName)
                    }
                    update.source = nil
                }
            } else if p.keyIs(key, "$source") {
                switch try p.parseValue() {
                case .string(let s): update.dollarSource = s
                case .null: update.dollarSource = nil
                case let v: throw SignalKDecodingError.wrongType(field: loc() + ".$source", expected: "string", found: v.typeName)
                }
            } else if p.keyIs(key, "timestamp") {
                switch try p.parseValue() {
                case .string(let s):
                    guard let d = SignalKTimestamp.parse(s) else {
                        throw SignalKDecodingError.invalidTimestamp(field: loc() + ".timestamp", value: s)
                    }
                    update.timestamp = d
                case .null: update.timestamp = nil
                case let v: throw SignalKDecodingError.wrongType(field: loc() + ".timestamp", expected: "string", found: v.typeName)
                }
            } else if p.keyIs(key, "path") {
                switch try p.parseValue() {
                case .string(let s): updatePath = s
                case .null: updatePath = nil
                case let v: throw SignalKDecodingError.wrongType(field: loc() + ".path", expected: "string", found: v.typeName)
                }
            } else {
                _ = try p.parseValue()
            }
        }
        update.values.reserveCapacity(values.count)
        for (k, e) in values.enumerated() {
            guard let path = e.path ?? updatePath else { continue }
            guard let value = e.value else { throw SignalKDecodingError.missingField(field: loc() + ".values[\(k)].value") }
            update.values.append(SignalKPathValue(path: path, value: value))
        }
        for (k, e) in metas.enumerated() {
            guard let path = e.path ?? updatePath else { continue }
            guard let value = e.value else { throw SignalKDecodingError.missingField(field: loc() + ".meta[\(k)].value") }
            update.meta.append(SignalKMetaEntry(path: path, value: value))
        }
        return update
    }
}

extension SignalKServerMessage {
    /// Parses and classifies one frame in a single pass (the fast path used by ``parse(_:)-(UnsafeRawBufferPointer)``).
    ///
    /// The single pass checks each member as it meets it, so an object that repeats a key with a bad
    /// value first and a good one last would be refused here, while JSON's rule (and the generic
    /// parser's) is that the last one wins. A frame the single pass refuses is therefore decoded
    /// again by the generic path, whose answer (value or error) is final; refusals are rare, so the
    /// fast path stays fast.
    static func parseFast(_ bytes: UnsafeRawBufferPointer) throws -> SignalKServerMessage {
        var p = JSONParser(bytes: bytes.bindMemory(to: UInt8.self), options: SignalKJSON.options)
        do {
            return try p.parseMessage()
        } catch {
            return try SignalKServerMessage.classify(SignalKJSON.parse(bytes))
        }
    }
}
