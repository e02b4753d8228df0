import Foundation
import LookoutWire

/// A Nightscout timestamp. Nightscout writes times either as Unix epoch milliseconds (`date`,
/// `srvModified`, …) or as ISO-8601 strings (`created_at`, `dateString`, `sysTime`, …), with or
/// without milliseconds and with `Z` or a numeric offset. A `NightscoutDate` decodes any of these,
/// exposes both forms, and re-encodes in the form it was read in (the original string is kept so a
/// read-modify-write round trip does not rewrite it).
public struct NightscoutDate: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// How the timestamp appears on the wire.
    public enum WireForm: Sendable, Hashable {
        /// A JSON number of epoch milliseconds.
        case epochMilliseconds
        /// A JSON string holding this exact ISO-8601 text.
        case iso(String)
    }

    /// Milliseconds since 1970-01-01T00:00:00Z.
    public let epochMilliseconds: Int64
    /// The offset from UTC in minutes written in the original string (`nil` for numbers and for
    /// strings without an offset).
    public let utcOffsetMinutes: Int?
    /// The form this value is encoded in.
    public let wireForm: WireForm

    /// Creates a timestamp from epoch milliseconds, encoded as a number.
    public init(epochMilliseconds: Int64) {
        self.epochMilliseconds = epochMilliseconds
        self.utcOffsetMinutes = nil
        self.wireForm = .epochMilliseconds
    }

    /// The largest magnitude of epoch milliseconds accepted from a number (about the year
    /// 285,000): a number beyond it from a server is not a date, and reading it must not trap.
    public static let largestMilliseconds: Double = 9e15

    /// Epoch milliseconds from a JSON number, or nil when it is not finite or out of range.
    static func milliseconds(_ d: Double) -> Int64? {
        guard d.isFinite, abs(d) < largestMilliseconds else { return nil }
        return Int64(d.rounded(.down))
    }

    /// Creates a timestamp from a `Date` (truncated to milliseconds), encoded as a number or as
    /// a UTC ISO string with milliseconds (`2024-01-02T03:04:05.678Z`). Dates beyond
    /// ±`largestMilliseconds` are clamped to it.
    public init(_ date: Date, asISOString: Bool = false) {
        let raw = (date.timeIntervalSince1970 * 1000).rounded(.down)
        let ms = Int64(raw.isNaN ? 0 : min(max(raw, -NightscoutDate.largestMilliseconds), NightscoutDate.largestMilliseconds))
        self.epochMilliseconds = ms
        self.utcOffsetMinutes = asISOString ? 0 : nil
        self.wireForm = asISOString ? .iso(NightscoutDate.isoString(epochMilliseconds: ms)) : .epochMilliseconds
    }

    /// Parses an ISO-8601 string (`YYYY-MM-DD[THH:MM[:SS[.fff]]][Z|±HH:MM|±HHMM|±HH]`, also with a
    /// space instead of `T` and `,` as fraction separator) or a string of epoch milliseconds.
    /// A string without an offset is read as UTC. RFC 2822 / RFC 1123 text
    /// (`Wed, 17 Oct 2018 05:13:00 GMT`) is accepted too. Returns `nil` when the text is not a date.
    public init?(string: String) {
        let trimmed = NightscoutDate.trimmedOfWhitespace(string)
        if NightscoutDate.isAllASCIIDigits(trimmed), let ms = Int64(trimmed), trimmed.utf8.count > 8 {
            self.epochMilliseconds = ms
            self.utcOffsetMinutes = nil
            self.wireForm = .iso(string)
            return
        }
        guard let (ms, offset) = NightscoutDate.parseISO(trimmed)
            ?? HTTPDate.parse(trimmed).map({ ($0, nil as Int?) }) else { return nil }
        self.epochMilliseconds = ms
        self.utcOffsetMinutes = offset
        self.wireForm = .iso(string)
    }

    /// `string.trimmingCharacters(in: .whitespaces)`, without the Foundation call when the first
    /// and last bytes are ASCII and not blanks (the usual case).
    static func trimmedOfWhitespace(_ string: String) -> String {
        let u = string.utf8
        if let first = u.first, let last = u.last, first < 0x80, last < 0x80,
           first != 0x20, first != 0x09, last != 0x20, last != 0x09 {
            return string
        }
        return string.trimmingCharacters(in: .whitespaces)
    }

    /// Non-empty and only `0`…`9` (the same as every `Character` being ASCII and `isNumber`).
    static func isAllASCIIDigits(_ s: String) -> Bool {
        var any = false
        for c in s.utf8 {
            guard c >= 0x30, c <= 0x39 else { return false }
            any = true
        }
        return any
    }

    /// The instant as a Foundation `Date`.
    public var date: Date { Date(timeIntervalSince1970: Double(epochMilliseconds) / 1000) }

    /// The instant as a UTC ISO-8601 string with milliseconds (`2024-01-02T03:04:05.678Z`),
    /// the form the server normalises to.
    public var isoString: String { NightscoutDate.isoString(epochMilliseconds: epochMilliseconds) }

    /// The instant as an ISO-8601 string without milliseconds (`2024-01-02T03:04:05Z`), the form
    /// AndroidAPS and Loop's `timestamp` use.
    public var isoStringWithoutMilliseconds: String {
        NightscoutDate.isoString(epochMilliseconds: epochMilliseconds, milliseconds: false)
    }

    /// The same instant, encoded as epoch milliseconds.
    public var asEpochMilliseconds: NightscoutDate { NightscoutDate(epochMilliseconds: epochMilliseconds) }

    /// The same instant, encoded as a UTC ISO string with milliseconds.
    public var asISOString: NightscoutDate {
        NightscoutDate(ms: epochMilliseconds, offset: 0, form: .iso(isoString))
    }

    private init(ms: Int64, offset: Int?, form: WireForm) {
        epochMilliseconds = ms; utcOffsetMinutes = offset; wireForm = form
    }

    /// The ISO text (UTC, milliseconds).
    public var description: String { isoString }

    /// Orders by instant.
    public static func < (lhs: NightscoutDate, rhs: NightscoutDate) -> Bool {
        lhs.epochMilliseconds < rhs.epochMilliseconds
    }

    /// Decodes a number (epoch milliseconds; fractional part dropped) or a string (ISO-8601 or
    /// numeric epoch milliseconds).
    public init(from decoder: any Decoder) throws {
        if let d = decoder as? JSONValueDecoder {
            try self.init(jsonValue: d.value)
            return
        }
        let c = try decoder.singleValueContainer()
        if let ms = try? c.decode(Int64.self) {
            self.init(epochMilliseconds: ms)
        } else if let d = try? c.decode(Double.self), let ms = NightscoutDate.milliseconds(d) {
            self.init(epochMilliseconds: ms)
        } else {
            let s = try c.decode(String.self)
            guard let parsed = NightscoutDate(string: s) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "Not a date: \(s)")
            }
            self = parsed
        }
    }

    /// The same rules as `init(from:)` for an already parsed value (`JSONValueDecoder`): `.int` is
    /// what decodes as `Int64`; `.double` is what decodes only as `Double`.
    init(jsonValue value: JSONValue) throws {
        switch value {
        case .int(let ms):
            self.init(epochMilliseconds: ms)
        case .double(let d) where NightscoutDate.milliseconds(d) != nil:
            self.init(epochMilliseconds: NightscoutDate.milliseconds(d)!)
        case .string(let s):
            guard let parsed = NightscoutDate(string: s) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "Not a date: \(s)"))
            }
            self = parsed
        default:
            throw JSONValueDecoder.mismatch(NightscoutDate.self, value)
        }
    }

    /// Encodes in the wire form the value was read or created with.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch wireForm {
        case .epochMilliseconds: try c.encode(epochMilliseconds)
        case .iso(let s): try c.encode(s)
        }
    }

    /// Equality by instant and wire form.
    public static func == (lhs: NightscoutDate, rhs: NightscoutDate) -> Bool {
        lhs.epochMilliseconds == rhs.epochMilliseconds && lhs.wireForm == rhs.wireForm
    }

    /// Hashes the instant and wire form.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(epochMilliseconds); hasher.combine(wireForm)
    }

    // MARK: - Calendar arithmetic (proleptic Gregorian, UTC)

    static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (m + 9) % 12
        let doy = (153 * mp + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }

    static func isoString(epochMilliseconds ms: Int64, milliseconds: Bool = true) -> String {
        let msInt = Int(ms)
        var days = msInt / 86_400_000
        var rem = msInt % 86_400_000
        if rem < 0 { rem += 86_400_000; days -= 1 }
        let (y, mo, d) = civilFromDays(days)
        let h = rem / 3_600_000, mi = rem / 60_000 % 60, s = rem / 1000 % 60, f = rem % 1000
        func p(_ v: Int, _ w: Int) -> String {
            let t = String(v); return String(repeating: "0", count: max(0, w - t.count)) + t
        }
        let base = "\(p(y, 4))-\(p(mo, 2))-\(p(d, 2))T\(p(h, 2)):\(p(mi, 2)):\(p(s, 2))"
        return milliseconds ? base + ".\(p(f, 3))Z" : base + "Z"
    }

    /// Returns (epoch ms, offset minutes or nil) for an ISO-8601 text.
    static func parseISO(_ text: String) -> (Int64, Int?)? {
        if let r = text.utf8.withContiguousStorageIfAvailable({ parseISO(utf8: $0) }) { return r }
        return Array(text.utf8).withUnsafeBufferPointer { parseISO(utf8: $0) }
    }

    static func parseISO(utf8 u: UnsafeBufferPointer<UInt8>) -> (Int64, Int?)? {
        var i = 0
        func digits(_ n: Int) -> Int? {
            guard i + n <= u.count else { return nil }
            var v = 0
            for k in 0..<n {
                let c = u[i + k]
                guard c >= 48, c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            i += n
            return v
        }
        func accept(_ c: UInt8) -> Bool {
            if i < u.count, u[i] == c { i += 1; return true }
            return false
        }
        guard let y = digits(4), accept(UInt8(ascii: "-")), let mo = digits(2), accept(UInt8(ascii: "-")),
              let d = digits(2), (1...12).contains(mo), (1...31).contains(d) else { return nil }
        var h = 0, mi = 0, s = 0, ms = 0
        var offset: Int? = nil
        if i < u.count, u[i] == UInt8(ascii: "T") || u[i] == UInt8(ascii: "t") || u[i] == UInt8(ascii: " ") {
            i += 1
            guard let hh = digits(2), accept(UInt8(ascii: ":")), let mm = digits(2) else { return nil }
            h = hh; mi = mm
            if accept(UInt8(ascii: ":")) {
                guard let ss = digits(2) else { return nil }
                s = ss
                if accept(UInt8(ascii: ".")) || accept(UInt8(ascii: ",")) {
                    var n = 0, scale = 100, any = false
                    while i < u.count, u[i] >= 48, u[i] <= 57 {
                        if n < 3 { ms += Int(u[i] - 48) * scale; scale /= 10 }
                        n += 1; i += 1; any = true
                    }
                    guard any else { return nil }
                }
            }
            guard h < 24 || (h == 24 && mi == 0 && s == 0), mi < 60, s < 61 else { return nil }
            if accept(UInt8(ascii: "Z")) || accept(UInt8(ascii: "z")) {
                offset = 0
            } else if i < u.count, u[i] == UInt8(ascii: "+") || u[i] == UInt8(ascii: "-") {
                let sign = u[i] == UInt8(ascii: "-") ? -1 : 1
                i += 1
                guard let oh = digits(2) else { return nil }
                var om = 0
                if accept(UInt8(ascii: ":")) {
                    guard let m2 = digits(2) else { return nil }
                    om = m2
                } else if let m2 = digits(2) {
                    om = m2
                }
                guard oh <= 23, om < 60 else { return nil }
                offset = sign * (oh * 60 + om)
            }
        }
        guard i == u.count else { return nil }
        let days = daysFromCivil(y, mo, d)
        let local = Int64(days) * 86_400_000 + Int64(h * 3_600_000 + mi * 60_000 + s * 1000 + ms)
        return (local - Int64((offset ?? 0) * 60_000), offset)
    }
}
