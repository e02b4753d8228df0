/// DNS message encoding and decoding for multicast DNS / DNS-SD (RFC 1035, RFC 6762, RFC 6763).
///
/// Only what service discovery needs: the header, questions, and PTR / SRV / TXT / A / AAAA
/// records (any other record type is kept as raw bytes). Names are compressed when encoding and
/// decompressed when decoding. Decoding never traps on bad input: it throws ``MDNSError``.

/// An error from DNS message decoding/encoding or from the mDNS querier. Every case says what went
/// wrong (and where, for packets) so it can be shown to a user as is.
public enum MDNSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The packet ends before a field that should be there. `offset` is where the read started.
    case truncated(field: String, offset: Int)
    /// A name's compression pointer points at or after itself (a loop) or outside the packet.
    case badCompressionPointer(offset: Int, target: Int)
    /// A name is longer than 255 bytes, or has too many compression jumps.
    case nameTooLong(offset: Int)
    /// A label length byte uses the reserved 0x40/0x80 prefixes.
    case badLabelType(offset: Int, byte: UInt8)
    /// A record's data does not have the size or layout its type needs.
    case badRecordData(type: UInt16, offset: Int, reason: String)
    /// A label longer than 63 bytes, or an empty label, cannot be encoded.
    case invalidLabel(String)
    /// A TXT string longer than 255 bytes cannot be encoded.
    case txtStringTooLong(Int)
    /// A socket call failed: `call` is the POSIX call, `errno` its error number.
    case socket(call: String, errno: Int32, detail: String)
    /// No IPv4 interface to browse on (none up, or none matched the requested names).
    case noInterfaces(String)
    /// Every query send failed on every interface; `detail` lists why per interface.
    case sendFailed(detail: String)

    public var description: String {
        switch self {
        case .truncated(let field, let offset):
            return "DNS message truncated: \(field) at byte \(offset) runs past the end"
        case .badCompressionPointer(let offset, let target):
            return "DNS name at byte \(offset): compression pointer to \(target) is not before it"
        case .nameTooLong(let offset):
            return "DNS name at byte \(offset) is longer than 255 bytes or has too many pointers"
        case .badLabelType(let offset, let byte):
            return "DNS name at byte \(offset): reserved label type 0x\(String(byte, radix: 16))"
        case .badRecordData(let type, let offset, let reason):
            return "DNS record (type \(type)) data at byte \(offset): \(reason)"
        case .invalidLabel(let label):
            return "DNS label \"\(label)\" is empty or longer than 63 bytes"
        case .txtStringTooLong(let n):
            return "TXT string of \(n) bytes is longer than 255"
        case .socket(let call, let errno, let detail):
            return "mDNS socket: \(call) failed (errno \(errno)): \(detail)"
        case .noInterfaces(let detail):
            return "mDNS: no usable IPv4 interface (\(detail))"
        case .sendFailed(let detail):
            return "mDNS: could not send the query on any interface: \(detail)"
        }
    }
}

/// A domain name as a list of labels (`["Spike Server", "_signalk-ws", "_tcp", "local"]`).
/// Labels may contain dots and spaces; comparison ignores ASCII case, as DNS does.
public struct MDNSName: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The labels, first (most specific) to last, without dots or a root label.
    public var labels: [String]

    /// A name from its labels.
    public init(labels: [String]) { self.labels = labels }

    /// Splits a dotted name (`_signalk-ws._tcp.local.`); a trailing dot is optional.
    public init(_ dotted: String) {
        labels = dotted.split(separator: ".", omittingEmptySubsequences: true).map(String.init)
    }

    public init(stringLiteral value: String) { self.init(value) }

    /// `instance` prepended to `service` (`Spike Server` + `_signalk-ws._tcp.local`).
    public init(instance: String, service: MDNSName) { labels = [instance] + service.labels }

    /// The dotted form with a trailing dot (labels are not escaped).
    public var description: String { labels.joined(separator: ".") + "." }

    /// The name without its first label.
    public var parent: MDNSName { MDNSName(labels: Array(labels.dropFirst())) }

    var key: [String] { labels.map { $0.lowercased() } }

    public static func == (a: MDNSName, b: MDNSName) -> Bool { a.key == b.key }
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }
}

/// Record types used by DNS-SD.
public enum MDNSRecordType {
    /// An IPv4 address.
    public static let a: UInt16 = 1
    /// A pointer to another name (DNS-SD: service type to instance).
    public static let ptr: UInt16 = 12
    /// Text strings (DNS-SD: the instance's `key=value` pairs).
    public static let txt: UInt16 = 16
    /// An IPv6 address.
    public static let aaaa: UInt16 = 28
    /// A service's host name and port.
    public static let srv: UInt16 = 33
    /// mDNS negative response: which record types a name does not have.
    public static let nsec: UInt16 = 47
    /// Every record type (questions only).
    public static let any: UInt16 = 255
}

/// A question: name, type, and the mDNS "unicast response requested" (QU) bit.
public struct MDNSQuestion: Sendable, Hashable {
    /// The name asked about.
    public var name: MDNSName
    /// The record type asked for (an ``MDNSRecordType`` value).
    public var type: UInt16
    /// The class without the QU bit; 1 is IN (Internet).
    public var recordClass: UInt16
    /// Whether a unicast reply is requested (the QU bit, top bit of the class).
    public var unicastResponse: Bool

    /// A question; the class defaults to IN.
    public init(name: MDNSName, type: UInt16, recordClass: UInt16 = 1, unicastResponse: Bool = false) {
        self.name = name
        self.type = type
        self.recordClass = recordClass
        self.unicastResponse = unicastResponse
    }
}

/// A record's data, decoded for the types DNS-SD uses.
public enum MDNSRecordData: Sendable, Hashable {
    case ptr(MDNSName)
    case srv(priority: UInt16, weight: UInt16, port: UInt16, target: MDNSName)
    /// The character-strings of a TXT record, as raw bytes.
    case txt([[UInt8]])
    /// Four bytes, network order.
    case a([UInt8])
    /// Sixteen bytes, network order.
    case aaaa([UInt8])
    /// Any other type, undecoded (names inside are not decompressed).
    case other([UInt8])
}

/// A resource record.
public struct MDNSRecord: Sendable, Hashable {
    /// The record's owner name.
    public var name: MDNSName
    /// The record type (an ``MDNSRecordType`` value).
    public var type: UInt16
    /// The class without the cache-flush bit; 1 is IN (Internet).
    public var recordClass: UInt16
    /// mDNS cache-flush bit (top bit of the class).
    public var cacheFlush: Bool
    /// How long the record may be cached, in seconds (0: goodbye, withdraw it).
    public var ttl: UInt32
    /// The record's data, decoded when the type is known.
    public var data: MDNSRecordData

    /// A record; the class defaults to IN.
    public init(name: MDNSName, type: UInt16, recordClass: UInt16 = 1, cacheFlush: Bool = false,
                ttl: UInt32, data: MDNSRecordData) {
        self.name = name
        self.type = type
        self.recordClass = recordClass
        self.cacheFlush = cacheFlush
        self.ttl = ttl
        self.data = data
    }

    /// A PTR record.
    public static func ptr(_ name: MDNSName, to target: MDNSName, ttl: UInt32 = 4500) -> MDNSRecord {
        MDNSRecord(name: name, type: MDNSRecordType.ptr, ttl: ttl, data: .ptr(target))
    }

    /// An SRV record.
    public static func srv(_ name: MDNSName, port: UInt16, target: MDNSName, ttl: UInt32 = 120) -> MDNSRecord {
        MDNSRecord(name: name, type: MDNSRecordType.srv, cacheFlush: true, ttl: ttl,
                   data: .srv(priority: 0, weight: 0, port: port, target: target))
    }

    /// A TXT record from `key=value` pairs (in order).
    public static func txt(_ name: MDNSName, _ pairs: [(String, String)], ttl: UInt32 = 4500) -> MDNSRecord {
        let strings = pairs.map { Array("\($0.0)=\($0.1)".utf8) }
        return MDNSRecord(name: name, type: MDNSRecordType.txt, cacheFlush: true, ttl: ttl,
                          data: .txt(strings.isEmpty ? [[]] : strings))
    }

    /// An A record.
    public static func a(_ name: MDNSName, _ address: [UInt8], ttl: UInt32 = 120) -> MDNSRecord {
        MDNSRecord(name: name, type: MDNSRecordType.a, cacheFlush: true, ttl: ttl, data: .a(address))
    }
}

/// A DNS message.
public struct MDNSMessage: Sendable, Hashable {
    /// The message ID (0 in mDNS multicast messages).
    public var id: UInt16
    /// The header flags (QR, opcode, AA, …); 0 for a standard query.
    public var flags: UInt16
    /// The question section.
    public var questions: [MDNSQuestion]
    /// The answer section.
    public var answers: [MDNSRecord]
    /// The authority section (in mDNS probes, the proposed records).
    public var authorities: [MDNSRecord]
    /// The additional section (in DNS-SD, usually the SRV, TXT and address records).
    public var additionals: [MDNSRecord]

    /// A message; every part defaults to empty or zero.
    public init(id: UInt16 = 0, flags: UInt16 = 0, questions: [MDNSQuestion] = [], answers: [MDNSRecord] = [],
                authorities: [MDNSRecord] = [], additionals: [MDNSRecord] = []) {
        self.id = id
        self.flags = flags
        self.questions = questions
        self.answers = answers
        self.authorities = authorities
        self.additionals = additionals
    }

    /// The QR bit: this is a response.
    public var isResponse: Bool { flags & 0x8000 != 0 }

    /// Every record of the answer, authority and additional sections.
    public var allRecords: [MDNSRecord] { answers + authorities + additionals }

    /// A query (flags 0) for `questions`.
    public static func query(_ questions: [MDNSQuestion]) -> MDNSMessage {
        MDNSMessage(questions: questions)
    }

    // MARK: Decoding

    /// Decodes a packet. Throws ``MDNSError`` for anything malformed; never traps.
    public static func decode(_ bytes: [UInt8]) throws -> MDNSMessage {
        var r = DNSReader(bytes: bytes)
        let id = try r.u16("header id")
        let flags = try r.u16("header flags")
        let qd = try r.u16("question count"), an = try r.u16("answer count")
        let ns = try r.u16("authority count"), ar = try r.u16("additional count")
        var m = MDNSMessage(id: id, flags: flags)
        for _ in 0..<qd {
            let name = try r.name()
            let type = try r.u16("question type")
            let cls = try r.u16("question class")
            m.questions.append(MDNSQuestion(name: name, type: type, recordClass: cls & 0x7FFF,
                                            unicastResponse: cls & 0x8000 != 0))
        }
        for _ in 0..<an { m.answers.append(try r.record()) }
        for _ in 0..<ns { m.authorities.append(try r.record()) }
        for _ in 0..<ar { m.additionals.append(try r.record()) }
        return m
    }

    // MARK: Encoding

    /// Encodes the message, compressing names (also inside PTR and SRV data).
    public func encode() throws -> [UInt8] {
        var w = DNSWriter()
        w.u16(id)
        w.u16(flags)
        for n in [questions.count, answers.count, authorities.count, additionals.count] {
            guard n <= 0xFFFF else { throw MDNSError.badRecordData(type: 0, offset: 0, reason: "more than 65535 entries") }
            w.u16(UInt16(n))
        }
        for q in questions {
            try w.name(q.name)
            w.u16(q.type)
            w.u16(q.recordClass | (q.unicastResponse ? 0x8000 : 0))
        }
        for rec in answers + authorities + additionals { try w.record(rec) }
        return w.bytes
    }
}

// MARK: - Reader

struct DNSReader {
    let bytes: [UInt8]
    var pos = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func u8(_ field: String) throws -> UInt8 {
        guard pos < bytes.count else { throw MDNSError.truncated(field: field, offset: pos) }
        defer { pos += 1 }
        return bytes[pos]
    }

    mutating func u16(_ field: String) throws -> UInt16 {
        guard pos + 2 <= bytes.count else { throw MDNSError.truncated(field: field, offset: pos) }
        defer { pos += 2 }
        return UInt16(bytes[pos]) << 8 | UInt16(bytes[pos + 1])
    }

    mutating func u32(_ field: String) throws -> UInt32 {
        guard pos + 4 <= bytes.count else { throw MDNSError.truncated(field: field, offset: pos) }
        defer { pos += 4 }
        return UInt32(bytes[pos]) << 24 | UInt32(bytes[pos + 1]) << 16 | UInt32(bytes[pos + 2]) << 8
            | UInt32(bytes[pos + 3])
    }

    mutating func take(_ n: Int, _ field: String) throws -> [UInt8] {
        guard n >= 0, pos + n <= bytes.count else { throw MDNSError.truncated(field: field, offset: pos) }
        defer { pos += n }
        return Array(bytes[pos..<pos + n])
    }

    /// Reads a (possibly compressed) name at `pos` and moves past it. Every pointer must point
    /// strictly before the label it appears in, so there are no loops.
    mutating func name() throws -> MDNSName {
        let start = pos
        var labels: [String] = []
        var cursor = pos
        var resumeAt: Int? = nil
        var total = 0
        var jumps = 0
        var lowestStart = pos  // pointers must go before every place already read
        while true {
            guard cursor < bytes.count else { throw MDNSError.truncated(field: "name", offset: cursor) }
            let len = bytes[cursor]
            switch len & 0xC0 {
            case 0x00:
                if len == 0 {
                    pos = resumeAt ?? cursor + 1
                    return MDNSName(labels: labels)
                }
                let n = Int(len)
                guard cursor + 1 + n <= bytes.count else { throw MDNSError.truncated(field: "name label", offset: cursor) }
                total += n + 1
                guard total <= 255 else { throw MDNSError.nameTooLong(offset: start) }
                labels.append(String(decoding: bytes[(cursor + 1)..<(cursor + 1 + n)], as: UTF8.self))
                cursor += 1 + n
            case 0xC0:
                guard cursor + 2 <= bytes.count else { throw MDNSError.truncated(field: "name pointer", offset: cursor) }
                let target = Int(len & 0x3F) << 8 | Int(bytes[cursor + 1])
                guard target < lowestStart else { throw MDNSError.badCompressionPointer(offset: cursor, target: target) }
                jumps += 1
                guard jumps <= 127 else { throw MDNSError.nameTooLong(offset: start) }
                if resumeAt == nil { resumeAt = cursor + 2 }
                lowestStart = target
                cursor = target
            default:
                throw MDNSError.badLabelType(offset: cursor, byte: len)
            }
        }
    }

    mutating func record() throws -> MDNSRecord {
        let owner = try name()
        let type = try u16("record type")
        let cls = try u16("record class")
        let ttl = try u32("record TTL")
        let length = Int(try u16("record data length"))
        let start = pos
        guard start + length <= bytes.count else { throw MDNSError.truncated(field: "record data", offset: start) }
        let end = start + length
        let data: MDNSRecordData
        switch type {
        case MDNSRecordType.ptr:
            let target = try name()
            guard pos == end else { throw MDNSError.badRecordData(type: type, offset: start, reason: "PTR name does not fill the data") }
            data = .ptr(target)
        case MDNSRecordType.srv:
            guard length >= 7 else { throw MDNSError.badRecordData(type: type, offset: start, reason: "SRV data shorter than 7 bytes") }
            let priority = try u16("SRV priority"), weight = try u16("SRV weight"), port = try u16("SRV port")
            let target = try name()
            guard pos == end else { throw MDNSError.badRecordData(type: type, offset: start, reason: "SRV target does not fill the data") }
            data = .srv(priority: priority, weight: weight, port: port, target: target)
        case MDNSRecordType.txt:
            var strings: [[UInt8]] = []
            while pos < end {
                let n = Int(bytes[pos])
                guard pos + 1 + n <= end else {
                    throw MDNSError.badRecordData(type: type, offset: pos, reason: "TXT string runs past the record")
                }
                strings.append(Array(bytes[(pos + 1)..<(pos + 1 + n)]))
                pos += 1 + n
            }
            data = .txt(strings)
        case MDNSRecordType.a:
            guard length == 4 else { throw MDNSError.badRecordData(type: type, offset: start, reason: "A data is \(length) bytes, not 4") }
            data = .a(try take(4, "A address"))
        case MDNSRecordType.aaaa:
            guard length == 16 else { throw MDNSError.badRecordData(type: type, offset: start, reason: "AAAA data is \(length) bytes, not 16") }
            data = .aaaa(try take(16, "AAAA address"))
        default:
            data = .other(try take(length, "record data"))
        }
        pos = end
        return MDNSRecord(name: owner, type: type, recordClass: cls & 0x7FFF, cacheFlush: cls & 0x8000 != 0,
                          ttl: ttl, data: data)
    }
}

// MARK: - Writer

struct DNSWriter {
    var bytes: [UInt8] = []
    /// Offsets of name suffixes already written (lowercased labels → offset), for compression.
    private var offsets: [[String]: Int] = [:]

    mutating func u16(_ v: UInt16) { bytes += [UInt8(v >> 8), UInt8(v & 0xFF)] }
    mutating func u32(_ v: UInt32) { bytes += [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    mutating func name(_ name: MDNSName) throws {
        let key = name.key
        var total = 1
        for (i, label) in name.labels.enumerated() {
            if let off = offsets[Array(key[i...])] {
                u16(0xC000 | UInt16(off))
                return
            }
            let utf8 = Array(label.utf8)
            guard !utf8.isEmpty, utf8.count <= 63 else { throw MDNSError.invalidLabel(label) }
            total += utf8.count + 1
            guard total <= 255 else { throw MDNSError.nameTooLong(offset: bytes.count) }
            if bytes.count < 0x3FFF { offsets[Array(key[i...])] = bytes.count }
            bytes.append(UInt8(utf8.count))
            bytes += utf8
        }
        bytes.append(0)
    }

    mutating func record(_ r: MDNSRecord) throws {
        try name(r.name)
        u16(r.type)
        u16(r.recordClass | (r.cacheFlush ? 0x8000 : 0))
        u32(r.ttl)
        let lengthAt = bytes.count
        u16(0)
        let start = bytes.count
        switch r.data {
        case .ptr(let target):
            try name(target)
        case .srv(let priority, let weight, let port, let target):
            u16(priority); u16(weight); u16(port)
            try name(target)
        case .txt(let strings):
            for s in strings {
                guard s.count <= 255 else { throw MDNSError.txtStringTooLong(s.count) }
                bytes.append(UInt8(s.count))
                bytes += s
            }
        case .a(let b), .aaaa(let b), .other(let b):
            bytes += b
        }
        let length = bytes.count - start
        guard length <= 0xFFFF else { throw MDNSError.badRecordData(type: r.type, offset: start, reason: "data longer than 65535 bytes") }
        bytes[lengthAt] = UInt8(length >> 8)
        bytes[lengthAt + 1] = UInt8(length & 0xFF)
    }
}

// MARK: - TXT helpers

extension MDNSRecordData {
    /// TXT strings as `key=value` (RFC 6763 §6): keys are lowercased, the first occurrence wins,
    /// a key without `=` maps to "" and strings without a key are skipped.
    public var txtDictionary: [String: String] {
        guard case .txt(let strings) = self else { return [:] }
        var out: [String: String] = [:]
        for s in strings where !s.isEmpty {
            let eq = s.firstIndex(of: UInt8(ascii: "="))
            let keyBytes = eq.map { s[..<$0] } ?? s[...]
            guard !keyBytes.isEmpty else { continue }
            let key = String(decoding: keyBytes, as: UTF8.self).lowercased()
            let value = eq.map { String(decoding: s[($0 + 1)...], as: UTF8.self) } ?? ""
            if out[key] == nil { out[key] = value }
        }
        return out
    }
}
