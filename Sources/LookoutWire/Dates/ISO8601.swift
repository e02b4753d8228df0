import Foundation

/// The one ISO-8601 / RFC 3339 date-time reader and writer, hand written for speed (no
/// `DateFormatter`). Which spellings are accepted is a ``Rules`` value: Signal K's strict
/// ``Rules/rfc3339`` or Nightscout's lenient ``Rules/nightscout``.
public enum ISO8601 {
    /// Which spellings ``ISO8601/parse(_:rules:)`` accepts.
    public struct Rules: Sendable, Hashable {
        /// A date without a time (`2024-09-09`, midnight UTC) is accepted.
        public var allowsDateOnly: Bool
        /// `HH:MM` without seconds is accepted.
        public var allowsMissingSeconds: Bool
        /// A time without `Z` or an offset is accepted (and read as UTC).
        public var allowsMissingOffset: Bool
        /// A space may separate date and time (besides `T` and `t`).
        public var allowsSpaceSeparator: Bool
        /// `,` may separate seconds and fraction (besides `.`).
        public var allowsCommaFraction: Bool
        /// Offsets may be `±HH` and `±HHMM` (besides `±HH:MM`).
        public var allowsCompactOffset: Bool
        /// `24:00:00` (the end of the day) is accepted.
        public var allowsHour24: Bool
        /// The day must exist in its month (`2014-02-30` is refused); otherwise 1…31 is enough.
        public var checksDaysInMonth: Bool

        /// Creates rules.
        public init(allowsDateOnly: Bool, allowsMissingSeconds: Bool, allowsMissingOffset: Bool,
                    allowsSpaceSeparator: Bool, allowsCommaFraction: Bool, allowsCompactOffset: Bool,
                    allowsHour24: Bool, checksDaysInMonth: Bool) {
            self.allowsDateOnly = allowsDateOnly
            self.allowsMissingSeconds = allowsMissingSeconds
            self.allowsMissingOffset = allowsMissingOffset
            self.allowsSpaceSeparator = allowsSpaceSeparator
            self.allowsCommaFraction = allowsCommaFraction
            self.allowsCompactOffset = allowsCompactOffset
            self.allowsHour24 = allowsHour24
            self.checksDaysInMonth = checksDaysInMonth
        }

        /// RFC 3339 date-time as Signal K uses it: `2014-08-15T16:00:00.081Z`, seconds and an
        /// offset (`Z` or `±hh:mm`) required, any number of fraction digits, `t`/`z` in lower
        /// case too, real calendar days only.
        public static let rfc3339 = Rules(
            allowsDateOnly: false, allowsMissingSeconds: false, allowsMissingOffset: false,
            allowsSpaceSeparator: false, allowsCommaFraction: false, allowsCompactOffset: false,
            allowsHour24: false, checksDaysInMonth: true)

        /// What Nightscout servers and uploaders write:
        /// `YYYY-MM-DD[(T|t| )HH:MM[:SS[(.|,)fff]]][Z|±HH:MM|±HHMM|±HH]`, no offset read as UTC.
        public static let nightscout = Rules(
            allowsDateOnly: true, allowsMissingSeconds: true, allowsMissingOffset: true,
            allowsSpaceSeparator: true, allowsCommaFraction: true, allowsCompactOffset: true,
            allowsHour24: true, checksDaysInMonth: false)
    }

    /// Parses `text` by `rules`, or returns `nil` when it is not such a date-time.
    public static func parse(_ text: String, rules: Rules) -> ISO8601Timestamp? {
        if let r = text.utf8.withContiguousStorageIfAvailable({ parse(utf8: $0, rules: rules) }) { return r }
        return Array(text.utf8).withUnsafeBufferPointer { parse(utf8: $0, rules: rules) }
    }

    /// Parses UTF-8 bytes by `rules` (see ``parse(_:rules:)``).
    public static func parse(utf8 u: UnsafeBufferPointer<UInt8>, rules: Rules) -> ISO8601Timestamp? {
        var i = 0
        func digits(_ n: Int) -> Int? {
            guard i + n <= u.count else { return nil }
            var v = 0
            for k in 0..<n {
                let c = u[i + k]
                guard c >= 0x30, c <= 0x39 else { return nil }
                v = v * 10 + Int(c - 0x30)
            }
            i += n
            return v
        }
        func accept(_ c: UInt8) -> Bool {
            if i < u.count, u[i] == c { i += 1; return true }
            return false
        }
        guard let y = digits(4), accept(UInt8(ascii: "-")), let mo = digits(2), accept(UInt8(ascii: "-")),
              let d = digits(2), (1...12).contains(mo), d >= 1,
              d <= (rules.checksDaysInMonth ? CivilCalendar.daysIn(month: mo, year: y) : 31) else { return nil }
        var h = 0, mi = 0, s = 0, nanos = 0
        var offset: Int? = nil
        if i < u.count, u[i] == UInt8(ascii: "T") || u[i] == UInt8(ascii: "t") || (rules.allowsSpaceSeparator && u[i] == 0x20) {
            i += 1
            guard let hh = digits(2), accept(UInt8(ascii: ":")), let mm = digits(2) else { return nil }
            h = hh; mi = mm
            if accept(UInt8(ascii: ":")) {
                guard let ss = digits(2) else { return nil }
                s = ss
                if accept(UInt8(ascii: ".")) || (rules.allowsCommaFraction && accept(UInt8(ascii: ","))) {
                    var n = 0, scale = 100_000_000
                    while i < u.count, u[i] >= 0x30, u[i] <= 0x39 {
                        if n < 9 { nanos += Int(u[i] - 0x30) * scale; scale /= 10 }
                        n += 1; i += 1
                    }
                    guard n > 0 else { return nil }
                }
            } else if !rules.allowsMissingSeconds {
                return nil
            }
            guard h < 24 || (rules.allowsHour24 && h == 24 && mi == 0 && s == 0 && nanos == 0), mi < 60, s < 61 else { return nil }
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
                } else if !rules.allowsCompactOffset {
                    return nil
                } else if let m2 = digits(2) {
                    om = m2
                }
                guard oh <= 23, om < 60 else { return nil }
                offset = sign * (oh * 60 + om)
            } else if !rules.allowsMissingOffset {
                return nil
            }
        } else if !rules.allowsDateOnly {
            return nil
        }
        guard i == u.count else { return nil }
        let days = CivilCalendar.days(year: y, month: mo, day: d)
        let local = Int64(days) * 86_400 + Int64(h * 3600 + mi * 60 + s)
        return ISO8601Timestamp(epochSeconds: local - Int64((offset ?? 0) * 60), nanoseconds: nanos, offsetMinutes: offset)
    }

    /// `2024-01-02T03:04:05.678Z` (UTC; without `.678` when `milliseconds` is false), the form
    /// Nightscout and signalk-server write.
    public static func format(epochMilliseconds ms: Int64, milliseconds: Bool = true) -> String {
        let (days, rem) = CivilCalendar.split(epochMilliseconds: ms)
        let (y, mo, d) = CivilCalendar.date(days: days)
        let h = rem / 3_600_000, mi = rem / 60_000 % 60, s = rem / 1000 % 60, f = rem % 1000
        let base = "\(pad(y, 4))-\(pad(mo, 2))-\(pad(d, 2))T\(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2))"
        return milliseconds ? base + ".\(pad(f, 3))Z" : base + "Z"
    }

    /// `date` as ``format(epochMilliseconds:milliseconds:)`` writes it (truncated to milliseconds).
    public static func format(_ date: Date, milliseconds: Bool = true) -> String {
        format(epochMilliseconds: epochMilliseconds(date), milliseconds: milliseconds)
    }

    /// Epoch milliseconds of `date`, rounded down; a date beyond `Int64` milliseconds (or not
    /// finite) saturates at `Int64.min`/`Int64.max` instead of trapping.
    public static func epochMilliseconds(_ date: Date) -> Int64 {
        let ms = (date.timeIntervalSince1970 * 1000).rounded(.down)
        if ms.isNaN { return 0 }
        if ms >= Double(Int64.max) { return .max }  // 2^63: the first Double beyond Int64
        if ms < Double(Int64.min) { return .min }
        return Int64(ms)
    }

    /// `v` in decimal, zero-padded on the left to `width` digits.
    static func pad(_ v: Int, _ width: Int) -> String {
        let t = String(v)
        return t.count >= width ? t : String(repeating: "0", count: width - t.count) + t
    }
}
