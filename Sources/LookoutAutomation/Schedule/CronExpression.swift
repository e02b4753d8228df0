import Foundation

/// A 5-field cron expression (`minute hour day-of-month month day-of-week`) and the next time it
/// matches in a time zone.
///
/// Fields take `*`, numbers, ranges `a-b`, steps `*/n` `a-b/n` `a/n`, lists `a,b-c`, month names
/// `jan`…`dec` and weekday names `sun`…`sat` (0 and 7 are Sunday). `@hourly`, `@daily`
/// (`@midnight`), `@weekly`, `@monthly` and `@yearly` (`@annually`) are shorthands. As in Vixie
/// cron, when both day fields are restricted a day matches if either does.
///
/// Daylight saving time: a job with a fixed hour runs once when the clock goes back (the repeated
/// hour is skipped) and, when the clock jumps forward over its time, at the first minute after the
/// gap. Jobs with `*` hours follow real minutes.
public struct CronExpression: Sendable, Equatable, CustomStringConvertible {
    /// Allowed minutes (0–59).
    public let minutes: Set<Int>
    /// Allowed hours (0–23).
    public let hours: Set<Int>
    /// Allowed days of the month (1–31).
    public let days: Set<Int>
    /// Allowed months (1–12).
    public let months: Set<Int>
    /// Allowed weekdays (0 = Sunday … 6).
    public let weekdays: Set<Int>
    /// The text it was parsed from.
    public let text: String
    let dayRestricted: Bool
    let weekdayRestricted: Bool
    let hourRestricted: Bool

    public var description: String { text }

    private static let macros = [
        "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
        "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
    ]
    private static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    /// Parses an expression; the error names the field and the part that is wrong.
    public init(_ text: String) throws(ScheduleSpecError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let expanded = CronExpression.macros[trimmed.lowercased()] ?? trimmed
        let fields = expanded.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard fields.count == 5 else {
            throw ScheduleSpecError(
                "cron expression \(String(reflecting: text)) has \(fields.count) field\(fields.count == 1 ? "" : "s"); "
                    + "expected 5: minute hour day-of-month month day-of-week (e.g. \"*/5 * * * *\")")
        }
        self.text = trimmed
        minutes = try CronExpression.field(fields[0], name: "minute", range: 0...59, names: [])
        hours = try CronExpression.field(fields[1], name: "hour", range: 0...23, names: [])
        days = try CronExpression.field(fields[2], name: "day-of-month", range: 1...31, names: [])
        months = try CronExpression.field(fields[3], name: "month", range: 1...12, names: CronExpression.monthNames, nameBase: 1)
        var weekdays = try CronExpression.field(fields[4], name: "day-of-week", range: 0...7, names: CronExpression.weekdayNames)
        if weekdays.remove(7) != nil { weekdays.insert(0) }
        self.weekdays = weekdays
        hourRestricted = fields[1] != "*"
        dayRestricted = !fields[2].hasPrefix("*")
        weekdayRestricted = !fields[4].hasPrefix("*")
    }

    private static func field(
        _ text: String, name: String, range: ClosedRange<Int>, names: [String], nameBase: Int = 0
    ) throws(ScheduleSpecError) -> Set<Int> {
        func fail(_ why: String) -> ScheduleSpecError {
            ScheduleSpecError("cron \(name) field \(String(reflecting: text)): \(why)")
        }
        func number(_ token: Substring) throws(ScheduleSpecError) -> Int {
            if let n = Int(token) {
                guard range.contains(n) else { throw fail("\(n) is out of range \(range.lowerBound)-\(range.upperBound)") }
                return n
            }
            if let i = names.firstIndex(of: token.lowercased()) { return i + nameBase }
            throw fail("\(String(reflecting: String(token))) is not a number\(names.isEmpty ? "" : " or a name such as \(names[1])")")
        }
        var result = Set<Int>()
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard !part.isEmpty else { throw fail("empty list item") }
            let pieces = part.split(separator: "/", omittingEmptySubsequences: false)
            guard pieces.count <= 2 else { throw fail("more than one '/' in \(String(reflecting: String(part)))") }
            var step = 1
            if pieces.count == 2 {
                guard let s = Int(pieces[1]), s > 0 else { throw fail("step \(String(reflecting: String(pieces[1]))) must be a whole number above 0") }
                step = s
            }
            let base = pieces[0]
            var low = range.lowerBound, high = range.upperBound
            if base == "*" {
                // the whole range
            } else if let dash = base.firstIndex(of: "-") {
                low = try number(base[..<dash])
                high = try number(base[base.index(after: dash)...])
                guard low <= high else { throw fail("range \(low)-\(high) runs backwards") }
            } else {
                low = try number(base)
                if pieces.count == 1 { high = low }  // `a/n` runs from a to the end of the range
            }
            result.formUnion(stride(from: low, through: high, by: step))
        }
        return result
    }

    /// The first whole minute strictly after `date` that matches, or nil if none does within
    /// five years (e.g. `0 0 30 2 *`).
    public func next(after date: Date, in timeZone: TimeZone) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        var t = (date.timeIntervalSince1970 / 60).rounded(.down) * 60 + 60
        let limit = t + 5 * 366 * 86_400
        while t < limit {
            let d = Date(timeIntervalSince1970: t)
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .weekday], from: d)
            guard let year = c.year, let month = c.month, let day = c.day, let hour = c.hour,
                  let minute = c.minute, let weekday = c.weekday
            else { return nil }
            if !months.contains(month) {
                t = nextStart(calendar, DateComponents(year: year, month: month + 1, day: 1), after: t)
                continue
            }
            if !dayMatches(day: day, weekday: weekday - 1) {
                t = nextStart(calendar, DateComponents(year: year, month: month, day: day + 1), after: t)
                continue
            }
            if hourRestricted, let gapRun = gapCatchUp(d, timeZone: timeZone, calendar: calendar) {
                return gapRun
            }
            if !hours.contains(hour) {
                t += Double(60 - minute) * 60
                continue
            }
            if !minutes.contains(minute) || (hourRestricted && isRepeatedWallTime(d, timeZone: timeZone)) {
                t += 60
                continue
            }
            return d
        }
        return nil
    }

    private func dayMatches(day: Int, weekday: Int) -> Bool {
        // Vixie cron: either day field may match when both are restricted; otherwise both must
        // (a field starting with `*`, even `*/2`, counts as unrestricted).
        if dayRestricted && weekdayRestricted { return days.contains(day) || weekdays.contains(weekday) }
        return days.contains(day) && weekdays.contains(weekday)
    }

    /// Midnight of the given local day (components may overflow), at least one minute after `t`.
    private func nextStart(_ calendar: Calendar, _ components: DateComponents, after t: Double) -> Double {
        guard let date = calendar.date(from: components) else { return t + 60 }
        return max(date.timeIntervalSince1970, t + 60)
    }

    /// Whether `d`'s local time already happened an hour (the DST shift) earlier: the clock went back.
    private func isRepeatedWallTime(_ d: Date, timeZone: TimeZone) -> Bool {
        let now = timeZone.secondsFromGMT(for: d)
        let before = timeZone.secondsFromGMT(for: d.addingTimeInterval(-7200))
        guard before > now else { return false }
        return timeZone.secondsFromGMT(for: d.addingTimeInterval(-Double(before - now))) == before
    }

    /// When `d` is the first minute after the clock jumped forward and a matching local time fell
    /// into the gap, `d` (the run happens right after the gap).
    private func gapCatchUp(_ d: Date, timeZone: TimeZone, calendar: Calendar) -> Date? {
        let now = timeZone.secondsFromGMT(for: d)
        let before = timeZone.secondsFromGMT(for: d.addingTimeInterval(-60))
        guard now > before else { return nil }
        let c = calendar.dateComponents([.hour, .minute], from: d)
        guard let hour = c.hour, let minute = c.minute else { return nil }
        let start = hour * 60 + minute - (now - before) / 60
        for wall in start..<(hour * 60 + minute) {
            let m = (wall + 1440) % 1440
            if hours.contains(m / 60) && minutes.contains(m % 60) { return d }
        }
        return nil
    }
}

/// A schedule that cannot be understood; the message names what was wrong.
public struct ScheduleSpecError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What was wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
