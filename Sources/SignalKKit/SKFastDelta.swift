import Foundation

// A single-pass decoder for stream frames. It decodes the delta envelope (updates, values, meta)
// straight from the bytes without building intermediate dictionaries, and falls back to the generic
// ``SKValue`` tree plus ``SKServerMessage/classify(_:)`` for every other shape. Its results equal
// `classify(SKJSON.parse(bytes))` (the tests check this on every fixture).

extension SKJSON.Parser {
    struct RawKey {
        var start: Int
        var end: Int
        var decoded: String?
    }

    mutating func parseRawKey() throws -> RawKey {
        guard i < buf.count, buf[i] == UInt8(ascii: "\"") else {
            throw fail(i < buf.count ? "unexpected \(describe(buf[i])), expected a string key" : "unexpected end of input in object")
        }
        var j = i + 1
        while j < buf.count {
            let c = buf[j]
            if c == UInt8(ascii: "\"") {
                let k = RawKey(start: i + 1, end: j, decoded: nil)
                i = j + 1
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
        for x in 0..<n where buf[k.start + x] != p[x] { return false }
        return true
    }

    func keyString(_ k: RawKey) -> String {
        k.decoded ?? String(decoding: UnsafeBufferPointer(rebasing: buf[k.start..<k.end]), as: UTF8.self)
    }

    /// Iterates the members of the object at `i` (which must be `{`).
    mutating func members(_ body: (inout Self, RawKey) throws -> Void) throws {
        try enter()
        i += 1
        skipWS()
        if i < buf.count && buf[i] == UInt8(ascii: "}") {
            i += 1; depth -= 1
            return
        }
        while true {
            skipWS()
            let key = try parseRawKey()
            skipWS()
            guard i < buf.count, buf[i] == UInt8(ascii: ":") else {
                throw fail(i < buf.count ? "expected ':' after object key" : "unexpected end of input in object")
            }
            i += 1
            skipWS()
            try body(&self, key)
            skipWS()
            guard i < buf.count else { throw fail("unexpected end of input in object") }
            if buf[i] == UInt8(ascii: ",") { i += 1; continue }
            if buf[i] == UInt8(ascii: "}") { i += 1; break }
            throw fail("unexpected \(describe(buf[i])), expected ',' or '}'")
        }
        depth -= 1
    }

    /// Iterates the elements of the array at `i` (which must be `[`).
    mutating func elements(_ body: (inout Self, Int) throws -> Void) throws {
        try enter()
        i += 1
        skipWS()
        if i < buf.count && buf[i] == UInt8(ascii: "]") {
            i += 1; depth -= 1
            return
        }
        var n = 0
        while true {
            skipWS()
            guard i < buf.count else { throw fail("unexpected end of input in array") }
            try body(&self, n)
            n += 1
            skipWS()
            guard i < buf.count else { throw fail("unexpected end of input in array") }
            if buf[i] == UInt8(ascii: ",") { i += 1; continue }
            if buf[i] == UInt8(ascii: "]") { i += 1; break }
            throw fail("unexpected \(describe(buf[i])), expected ',' or ']'")
        }
        depth -= 1
    }

    var atObject: Bool { i < buf.count && buf[i] == UInt8(ascii: "{") }
    var atArray: Bool { i < buf.count && buf[i] == UInt8(ascii: "[") }

    mutating func parseMessage() throws -> SKServerMessage {
        skipWS()
        guard atObject else { return try SKServerMessage.classify(parseDocument()) }
        var others: [String: SKValue] = [:]
        var context: SKValue?
        var updates: [SKUpdate]?
        var badUpdates: SKValue?
        try members { p, key in
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
        skipWS()
        if i < buf.count { throw fail("unexpected data after the JSON value") }
        if let bad = badUpdates {
            throw SignalKDecodingError.wrongType(field: "updates", expected: "array", found: bad.typeName)
        }
        guard let updates else {
            if let context { others["context"] = context }
            return try SKServerMessage.classify(.object(others))
        }
        var ctx: String?
        switch context {
        case nil, .null?: ctx = nil
        case .string(let s)?: ctx = s
        case let v?: throw SignalKDecodingError.wrongType(field: "context", expected: "string", found: v.typeName)
        }
        return .delta(SKDelta(context: ctx, updates: updates))
    }

    mutating func parseUpdates() throws -> [SKUpdate] {
        var out: [SKUpdate] = []
        try elements { p, n in
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
        var value: SKValue?
    }

    mutating func parseUpdate(_ n: Int) throws -> SKUpdate {
        var update = SKUpdate()
        var updatePath: String?
        var values: [Entry] = []
        var metas: [Entry] = []
        func loc() -> String { "updates[\(n)]" }
        try members { p, key in
            if p.keyIs(key, "values") || p.keyIs(key, "meta") {
                let isValues = p.keyIs(key, "values")
                let field = loc() + (isValues ? ".values" : ".meta")
                guard p.atArray else {
                    let v = try p.parseValue()
                    throw SignalKDecodingError.wrongType(field: field, expected: "array", found: v.typeName)
                }
                var entries: [Entry] = []
                try p.elements { p, k in
                    guard p.atObject else {
                        let v = try p.parseValue()
                        throw SignalKDecodingError.wrongType(field: field + "[\(k)]", expected: "object", found: v.typeName)
                    }
                    var e = Entry()
                    try p.members { p, key in
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
                    var source = SKSource()
                    try p.members { p, key in
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
                    guard let d = SKTimestamp.parse(s) else {
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
            update.values.append(SKPathValue(path: path, value: value))
        }
        for (k, e) in metas.enumerated() {
            guard let path = e.path ?? updatePath else { continue }
            guard let value = e.value else { throw SignalKDecodingError.missingField(field: loc() + ".meta[\(k)].value") }
            update.meta.append(SKMetaEntry(path: path, value: value))
        }
        return update
    }
}

extension SKServerMessage {
    /// Parses and classifies one frame in a single pass (the fast path used by ``parse(_:)-(UnsafeRawBufferPointer)``).
    ///
    /// The single pass checks each member as it meets it, so an object that repeats a key with a bad
    /// value first and a good one last would be refused here, while JSON's rule (and the generic
    /// parser's) is that the last one wins. A frame the single pass refuses is therefore decoded
    /// again by the generic path, whose answer (value or error) is final; refusals are rare, so the
    /// fast path stays fast.
    static func parseFast(_ bytes: UnsafeRawBufferPointer) throws -> SKServerMessage {
        var p = SKJSON.Parser(bytes.bindMemory(to: UInt8.self))
        do {
            return try p.parseMessage()
        } catch {
            return try SKServerMessage.classify(SKJSON.parse(bytes))
        }
    }
}
