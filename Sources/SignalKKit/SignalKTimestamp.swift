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
}
