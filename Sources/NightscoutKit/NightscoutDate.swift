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
        if NightscoutDate.isAllASCIIDigits(trimmed), let ms = Int64(trimmed), trimmed.utf8.count > 8,
           Double(ms) < NightscoutDate.largestMilliseconds {  // beyond: no date, as for a number
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
    /// numeric epoch milliseconds); beyond ±`largestMilliseconds` a number is no date.
    public init(from decoder: any Decoder) throws {
        if let d = decoder as? JSONValueDecoder {
            try self.init(jsonValue: d.value)
            return
        }
        let c = try decoder.singleValueContainer()
        if let ms = try? c.decode(Int64.self), Double(ms).magnitude < NightscoutDate.largestMilliseconds {
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
        case .int(let ms) where Double(ms).magnitude < NightscoutDate.largestMilliseconds:
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

    // MARK: - ISO-8601 (LookoutWire's reader with Nightscout's rules)

    static func isoString(epochMilliseconds ms: Int64, milliseconds: Bool = true) -> String {
        ISO8601.format(epochMilliseconds: ms, milliseconds: milliseconds)
    }

    /// Returns (epoch ms, offset minutes or nil) for an ISO-8601 text (``ISO8601/Rules/nightscout``).
    static func parseISO(_ text: String) -> (Int64, Int?)? {
        ISO8601.parse(text, rules: .nightscout).map { ($0.epochMilliseconds, $0.offsetMinutes) }
    }
}
