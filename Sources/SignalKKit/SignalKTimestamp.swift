import Foundation
import LookoutWire

/// RFC 3339 timestamps as Signal K uses them (`2014-08-15T16:00:00.081Z`, `2010-01-07T07:18:44Z`):
/// LookoutWire's ``ISO8601`` reader with its strict ``ISO8601/Rules/rfc3339`` rules (any number of
/// fraction digits, a `Z` or `±hh:mm` offset, lower-case `t`/`z` too).
public enum SignalKTimestamp {
    /// Parses an RFC 3339 date-time, or returns `nil` when the text is not one.
    public static func parse(_ text: String) -> Date? {
        ISO8601.parse(text, rules: .rfc3339)?.date
    }

    /// Formats a date as RFC 3339 UTC with milliseconds and `Z`, the form signalk-server emits
    /// (`2026-08-22T17:01:02.345Z`).
    public static func format(_ date: Date) -> String { ISO8601.format(date) }

    /// Calls `body` with the bytes of ``format(_:)``, written on the native stack (no allocation:
    /// for hot paths that copy the text elsewhere, e.g. onto a Lua stack).
    public static func withFormatted<R>(_ date: Date, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let seconds = date.timeIntervalSince1970
        let ms = seconds.magnitude < 1e14 ? Int64((seconds * 1000).rounded(.down)) : 0
        let (days, rem) = CivilCalendar.split(epochMilliseconds: ms)
        let (y, mo, d) = CivilCalendar.date(days: days)
        guard seconds.magnitude < 1e14, (0...9999).contains(y) else {
            var text = format(date)
            return try text.withUTF8 { try body($0) }
        }
        var bytes: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: `yyyy-mm-ddThh:mm:ss.fffZ`
        return try withUnsafeMutableBytes(of: &bytes) { raw in
            let b = raw.bindMemory(to: UInt8.self)
            var i = 0
            func put(_ v: Int, _ width: Int) {
                var v = v
                for k in stride(from: width - 1, through: 0, by: -1) {
                    b[i + k] = UInt8(truncatingIfNeeded: 48 + v % 10)
                    v /= 10
                }
                i += width
            }
            func put(_ c: UInt8) {
                b[i] = c
                i += 1
            }
            put(y, 4); put(UInt8(ascii: "-")); put(mo, 2); put(UInt8(ascii: "-")); put(d, 2); put(UInt8(ascii: "T"))
            put(rem / 3_600_000, 2); put(UInt8(ascii: ":")); put(rem / 60_000 % 60, 2); put(UInt8(ascii: ":"))
            put(rem / 1000 % 60, 2); put(UInt8(ascii: ".")); put(rem % 1000, 3); put(UInt8(ascii: "Z"))
            return try body(UnsafeBufferPointer(rebasing: b[0..<i]))
        }
    }
}
