import Foundation

/// The calendar date and time of day an instant shows on a clock in a time zone, computed from the
/// zone's offset from UTC at that instant (``CivilCalendar`` arithmetic).
///
/// Not `DateFormatter`: on Linux Foundation's formatter rebuilds a named zone from its file under
/// `/usr/share/zoneinfo` and traps (kills the process) when that file is missing, as in a minimal
/// Debian root without tzdata, while `TimeZone` itself takes its rules from the ICU data linked
/// into the binary and needs no file.
public struct WallClock: Sendable, Hashable {
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The year (proleptic Gregorian).
    public let year: Int
    /// The month, 1…12.
    public let month: Int
    /// The day of the month, 1…31.
    public let day: Int
    /// The hour, 0…23.
    public let hour: Int
    /// The minute, 0…59.
    public let minute: Int
    /// The second, 0…59.
    public let second: Int

    /// The clock reading of `epochMilliseconds` at `offsetSeconds` east of UTC (saturating at the
    /// ends of `Int64` instead of trapping).
    public init(epochMilliseconds ms: Int64, offsetSeconds: Int) {
        let local = ms.addingReportingOverflow(Int64(offsetSeconds) * 1000)
        let (days, msOfDay) = CivilCalendar.split(epochMilliseconds: local.overflow ? (ms < 0 ? .min : .max) : local.partialValue)
        (year, month, day) = CivilCalendar.date(days: days)
        let seconds = msOfDay / 1000
        hour = seconds / 3600
        minute = seconds / 60 % 60
        second = seconds % 60
    }

    /// The clock reading of `date` in `zone`.
    public init(_ date: Date, in zone: TimeZone) {
        self.init(epochMilliseconds: ISO8601.epochMilliseconds(date), offsetSeconds: zone.secondsFromGMT(for: date))
    }

    /// `14:05`.
    public var hourMinute: String { "\(ISO8601.pad(hour, 2)):\(ISO8601.pad(minute, 2))" }

    /// `14:05:09`.
    public var hourMinuteSecond: String { hourMinute + ":" + ISO8601.pad(second, 2) }

    /// `Oct 7 14:05`: the month's English abbreviation, the day, the time.
    public var monthDayHourMinute: String { "\(Self.monthNames[month - 1]) \(day) \(hourMinute)" }
}
