import Foundation

/// RFC 1123 / RFC 2822 dates, as in `Date`, `Last-Modified`, `If-Modified-Since` and
/// `If-Unmodified-Since` (second precision).
public enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Formats `epochMilliseconds` as `Wed, 17 Oct 2018 05:13:00 GMT` (milliseconds dropped).
    public static func format(epochMilliseconds ms: Int64) -> String {
        let (dayNumber, msOfDay) = CivilCalendar.split(epochMilliseconds: ms)
        let rem = msOfDay / 1000
        let (y, m, d) = CivilCalendar.date(days: dayNumber)
        let weekday = ((dayNumber % 7) + 11) % 7 // 1970-01-01 was a Thursday
        func p2(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(days[weekday]), \(p2(d)) \(months[m - 1]) \(ISO8601.pad(y, 4)) \(p2(rem / 3600)):\(p2(rem / 60 % 60)):\(p2(rem % 60)) GMT"
    }

    /// Formats a `Date` (see ``format(epochMilliseconds:)``).
    public static func format(_ date: Date) -> String {
        format(epochMilliseconds: ISO8601.epochMilliseconds(date))
    }

    /// Parses `[Wed, ]17 Oct 2018 05:13[:00] (GMT|UT|UTC|Z|±hhmm)` to epoch milliseconds; a year
    /// beyond ±300,000 is no date.
    public static func parse(_ text: String) -> Int64? {
        var parts = text.replacingOccurrences(of: ",", with: " ").split(separator: " ").map(String.init)
        if let first = parts.first, days.contains(first) { parts.removeFirst() }
        guard parts.count == 5, let d = Int(parts[0]), let mi = months.firstIndex(of: parts[1]),
              let y = Int(parts[2]), (1...31).contains(d),
              abs(y) <= 300_000 else { return nil }  // beyond any JavaScript date; keeps the day arithmetic in range
        let time = parts[3].split(separator: ":").map { Int($0) }
        guard time.count == 2 || time.count == 3, !time.contains(where: { $0 == nil }) else { return nil }
        let h = time[0]!, m = time[1]!, s = time.count == 3 ? time[2]! : 0
        guard h < 24, m < 60, s < 61 else { return nil }
        let zone = parts[4]
        var offset = 0
        switch zone {
        case "GMT", "UT", "UTC", "Z": offset = 0
        default:
            let u = Array(zone.utf8)
            guard u.count == 5, u[0] == UInt8(ascii: "+") || u[0] == UInt8(ascii: "-"),
                  let hh = Int(String(zone.dropFirst().prefix(2))), let mm = Int(String(zone.suffix(2))) else { return nil }
            offset = (u[0] == UInt8(ascii: "-") ? -1 : 1) * (hh * 60 + mm)
        }
        let days = CivilCalendar.days(year: y, month: mi + 1, day: d)
        return (Int64(days) * 86_400 + Int64(h * 3600 + m * 60 + s) - Int64(offset * 60)) * 1000
    }
}

extension HTTPDate {
    /// A `Retry-After` value in seconds from `now`: delta-seconds, or an HTTP date (at least 0);
    /// `nil` when it is neither.
    public static func retryAfter(_ text: String, now: Date = Date()) -> TimeInterval? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed), seconds.isFinite { return seconds >= 0 ? min(seconds, largestRetryAfter) : nil }
        guard let ms = parse(trimmed) else { return nil }
        return min(max(0, Double(ms) / 1000 - now.timeIntervalSince1970), largestRetryAfter)
    }

    /// The longest wait a `Retry-After` gives (a year, in seconds): a server asking for more
    /// (`Retry-After: 1e300`) gets this, so that no caller turns its wait into a trapping integer.
    public static let largestRetryAfter: TimeInterval = 366 * 86_400
}
