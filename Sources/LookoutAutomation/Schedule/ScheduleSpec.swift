import Foundation
import Lua

/// When a job runs: every fixed interval, on a cron expression, or daily at a time.
public enum ScheduleSpec: Sendable, Equatable, CustomStringConvertible {
    /// Every `seconds`, counted from the last run (the first run is at once unless a run is
    /// remembered from before).
    case every(seconds: Double, text: String)
    /// On a cron expression.
    case cron(CronExpression)
    /// Daily (or on given weekdays) at a local time, kept as cron and the original text.
    case at(CronExpression, text: String)

    /// `every`, `cron` or `at`.
    public var kind: String {
        switch self {
        case .every: "every"
        case .cron: "cron"
        case .at: "at"
        }
    }

    /// The text as the script wrote it.
    public var description: String {
        switch self {
        case .every(_, let text): text
        case .cron(let expression): expression.text
        case .at(_, let text): text
        }
    }

    /// An interval such as `"5m"`, `"90s"` or a number of seconds (at least one second).
    public static func interval(_ text: String) throws(ScheduleSpecError) -> ScheduleSpec {
        guard let seconds = Quantities.parseDuration(text) else {
            throw ScheduleSpecError("invalid interval \(String(reflecting: text)); use text such as \"30s\", \"5m\", \"1h\"")
        }
        return try interval(seconds: seconds, text: text)
    }

    /// An interval in seconds (at least one second).
    public static func interval(seconds: Double, text: String) throws(ScheduleSpecError) -> ScheduleSpec {
        guard seconds.isFinite, seconds >= 1 else {
            throw ScheduleSpecError("interval \(text) is too short; a schedule runs at most once a second (use timer.every for faster)")
        }
        return .every(seconds: seconds, text: text)
    }

    /// A time of day: `"07:00"`, `"7:30"`, `"Mon 07:00"`, `"mon,fri 18:15"`, `"Mon-Fri 06:45"`.
    public static func at(_ text: String) throws(ScheduleSpecError) -> ScheduleSpec {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard (1...2).contains(parts.count) else {
            throw ScheduleSpecError("invalid time \(String(reflecting: text)); use \"HH:MM\" or \"Mon 07:00\"")
        }
        let clock = parts.last!.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 2, let hour = Int(clock[0]), let minute = Int(clock[1]), clock[1].count == 2,
              (0...23).contains(hour), (0...59).contains(minute)
        else {
            throw ScheduleSpecError("invalid time \(String(reflecting: text)); use a 24-hour time such as \"07:00\" or \"18:30\"")
        }
        let days = parts.count == 2 ? String(parts[0]) : "*"
        do {
            return .at(try CronExpression("\(minute) \(hour) * * \(days)"), text: text)
        } catch {
            throw ScheduleSpecError("invalid days in \(String(reflecting: text)): use names such as Mon, Mon-Fri or sat,sun")
        }
    }

    /// When the next run is due, given the last run: `every` counts from it (at once without
    /// one); cron and `at` give the first match strictly after `after`.
    public func next(after: Date, lastRun: Date?, in timeZone: TimeZone) -> Date? {
        switch self {
        case .every(let seconds, _):
            guard let lastRun else { return after }
            return max(lastRun.addingTimeInterval(seconds), after)
        case .cron(let expression), .at(let expression, _):
            return expression.next(after: after, in: timeZone)
        }
    }
}
