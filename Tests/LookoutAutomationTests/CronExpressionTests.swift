import Foundation
import XCTest

@testable import LookoutAutomation

/// Cron parsing, matching and time zones (`CronExpression`), and `at`/`every` specs.
final class CronExpressionTests: XCTestCase {
    private let utc = TimeZone(identifier: "UTC")!

    /// `yyyy-MM-dd HH:mm` in a zone.
    private func date(_ text: String, _ zone: TimeZone) -> Date {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.date(from: text)!
    }

    private func text(_ date: Date?, _ zone: TimeZone) -> String {
        guard let date else { return "never" }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd HH:mm EEE xxx"
        return formatter.string(from: date)
    }

    /// The next `count` runs after `start`.
    private func runs(_ expression: String, after start: String, count: Int = 3, zone: TimeZone? = nil) throws -> [String] {
        let zone = zone ?? utc
        let cron = try CronExpression(expression)
        var t = date(start, zone)
        var result: [String] = []
        for _ in 0..<count {
            guard let next = cron.next(after: t, in: zone) else { result.append("never"); break }
            result.append(text(next, zone))
            t = next
        }
        return result
    }

    func testFieldsParseToTheirSets() throws {
        let cron = try CronExpression("*/15 8-18/5 1,15 jan-mar,DEC mon-fri")
        XCTAssertEqual(cron.minutes, [0, 15, 30, 45])
        XCTAssertEqual(cron.hours, [8, 13, 18])
        XCTAssertEqual(cron.days, [1, 15])
        XCTAssertEqual(cron.months, [1, 2, 3, 12])
        XCTAssertEqual(cron.weekdays, [1, 2, 3, 4, 5])
        XCTAssertEqual(try CronExpression("0 0 * * 7").weekdays, [0], "7 is Sunday too")
        XCTAssertEqual(try CronExpression("5/20 * * * *").minutes, [5, 25, 45], "a/n runs to the end of the range")
        XCTAssertEqual(try CronExpression("@hourly").minutes, [0])
        XCTAssertEqual(try CronExpression("@daily").hours, [0])
        XCTAssertEqual(try CronExpression("@weekly").weekdays, [0])
        XCTAssertEqual(try CronExpression("@monthly").days, [1])
        XCTAssertEqual(try CronExpression("@yearly").months, [1])
        XCTAssertEqual(try CronExpression("  1  2  3  4  5 ").description, "1  2  3  4  5")
    }

    func testBadExpressionsNameTheFieldAndThePart() {
        let cases: [(String, String)] = [
            ("* * * *", "has 4 fields; expected 5"),
            ("* * * * * *", "has 6 fields"),
            ("60 * * * *", "cron minute field \"60\": 60 is out of range 0-59"),
            ("* 24 * * *", "cron hour field \"24\": 24 is out of range 0-23"),
            ("* * 0 * *", "cron day-of-month field \"0\": 0 is out of range 1-31"),
            ("* * * 13 *", "cron month field \"13\": 13 is out of range 1-12"),
            ("* * * * 8", "cron day-of-week field \"8\": 8 is out of range 0-7"),
            ("*/0 * * * *", "step \"0\" must be a whole number above 0"),
            ("5-1 * * * *", "range 5-1 runs backwards"),
            ("1,,2 * * * *", "empty list item"),
            ("* * * foo *", "\"foo\" is not a number or a name such as feb"),
            ("* * * * funday", "\"funday\" is not a number or a name such as mon"),
            ("x * * * *", "cron minute field \"x\": \"x\" is not a number"),
            ("1/2/3 * * * *", "more than one '/'"),
        ]
        for (expression, expected) in cases {
            XCTAssertThrowsError(try CronExpression(expression), expression) { error in
                let message = (error as? ScheduleSpecError)?.description ?? "\(error)"
                XCTAssertTrue(message.contains(expected), "\(expression): \(message)")
            }
        }
    }

    func testNextRuns() throws {
        XCTAssertEqual(try runs("*/5 * * * *", after: "2026-03-10 10:02"), [
            "2026-03-10 10:05 Tue +00:00", "2026-03-10 10:10 Tue +00:00", "2026-03-10 10:15 Tue +00:00",
        ])
        XCTAssertEqual(try runs("*/5 * * * *", after: "2026-03-10 10:05", count: 1), ["2026-03-10 10:10 Tue +00:00"],
                       "strictly after")
        XCTAssertEqual(try runs("0 7 * * mon-fri", after: "2026-03-13 08:00"), [
            "2026-03-16 07:00 Mon +00:00", "2026-03-17 07:00 Tue +00:00", "2026-03-18 07:00 Wed +00:00",
        ])
        XCTAssertEqual(try runs("30 23 31 * *", after: "2026-01-31 23:30"), [
            "2026-03-31 23:30 Tue +00:00", "2026-05-31 23:30 Sun +00:00", "2026-07-31 23:30 Fri +00:00",
        ], "months without a 31st are skipped")
        XCTAssertEqual(try runs("0 0 29 2 *", after: "2026-01-01 00:00", count: 2), [
            "2028-02-29 00:00 Tue +00:00", "2032-02-29 00:00 Sun +00:00",
        ], "leap days")
        XCTAssertEqual(try runs("0 0 30 2 *", after: "2026-01-01 00:00", count: 1), ["never"])
        XCTAssertEqual(try runs("59 23 31 12 *", after: "2026-12-31 23:58", count: 2), [
            "2026-12-31 23:59 Thu +00:00", "2027-12-31 23:59 Fri +00:00",
        ], "year rollover")
    }

    func testBothDayFieldsRestrictedMatchEither() throws {
        // The 13th, or any Friday (cron's OR rule).
        XCTAssertEqual(try runs("0 12 13 * fri", after: "2026-03-01 00:00", count: 4), [
            "2026-03-06 12:00 Fri +00:00", "2026-03-13 12:00 Fri +00:00", "2026-03-20 12:00 Fri +00:00",
            "2026-03-27 12:00 Fri +00:00",
        ])
        XCTAssertEqual(try runs("0 12 10 * tue", after: "2026-03-01 00:00", count: 2), [
            "2026-03-03 12:00 Tue +00:00", "2026-03-10 12:00 Tue +00:00",
        ])
        // A starred day-of-month (even with a step) means both must match.
        XCTAssertEqual(try runs("0 12 */2 * fri", after: "2026-03-01 00:00", count: 2), [
            "2026-03-13 12:00 Fri +00:00", "2026-03-27 12:00 Fri +00:00",
        ])
    }

    func testTimeZonesAndDaylightSaving() throws {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        let newYork = TimeZone(identifier: "America/New_York")!
        // 07:00 local is a different instant per zone.
        let utcNext = try CronExpression("0 7 * * *").next(after: date("2026-06-01 00:00", utc), in: utc)!
        let nyNext = try CronExpression("0 7 * * *").next(after: date("2026-06-01 00:00", utc), in: newYork)!
        XCTAssertEqual(nyNext.timeIntervalSince(utcNext), 4 * 3600)
        // Clock goes back (Berlin, 25 Oct 2026, 03:00 → 02:00): a fixed-hour job runs once.
        XCTAssertEqual(try runs("30 2 * * *", after: "2026-10-24 12:00", count: 2, zone: berlin), [
            "2026-10-25 02:30 Sun +02:00", "2026-10-26 02:30 Mon +01:00",
        ])
        // …but an every-15-minutes job follows real time through the repeated hour.
        XCTAssertEqual(try runs("*/30 * * * *", after: "2026-10-25 01:50", count: 5, zone: berlin), [
            "2026-10-25 02:00 Sun +02:00", "2026-10-25 02:30 Sun +02:00", "2026-10-25 02:00 Sun +01:00",
            "2026-10-25 02:30 Sun +01:00", "2026-10-25 03:00 Sun +01:00",
        ])
        // Clock jumps forward (Berlin, 29 Mar 2026, 02:00 → 03:00): 02:30 runs right after the gap.
        XCTAssertEqual(try runs("30 2 * * *", after: "2026-03-28 12:00", count: 3, zone: berlin), [
            "2026-03-29 03:00 Sun +02:00", "2026-03-30 02:30 Mon +02:00", "2026-03-31 02:30 Tue +02:00",
        ])
        XCTAssertEqual(try runs("15 * * * *", after: "2026-03-29 01:00", count: 2, zone: berlin), [
            "2026-03-29 01:15 Sun +01:00", "2026-03-29 03:15 Sun +02:00",
        ], "a job with * hours does not catch up the skipped hour")
    }

    func testAtAndEverySpecs() throws {
        guard case .at(let daily, _) = try ScheduleSpec.at("07:05") else { return XCTFail() }
        XCTAssertEqual(daily.minutes, [5])
        XCTAssertEqual(daily.hours, [7])
        guard case .at(let weekdays, _) = try ScheduleSpec.at("Mon-Fri 18:30") else { return XCTFail() }
        XCTAssertEqual(weekdays.weekdays, [1, 2, 3, 4, 5])
        guard case .at(let weekend, _) = try ScheduleSpec.at("sat,sun 9:30") else { return XCTFail() }
        XCTAssertEqual(weekend.weekdays, [0, 6])
        XCTAssertEqual(weekend.hours, [9])
        for bad in ["7", "25:00", "07:60", "07:5", "Someday 07:00", "Mon Tue 07:00", ""] {
            XCTAssertThrowsError(try ScheduleSpec.at(bad), bad)
        }
        XCTAssertEqual(try ScheduleSpec.interval("5m"), .every(seconds: 300, text: "5m"))
        XCTAssertThrowsError(try ScheduleSpec.interval("0.5s")) { error in
            XCTAssertTrue("\(error)".contains("too short"))
        }
        XCTAssertThrowsError(try ScheduleSpec.interval("soon")) { error in
            XCTAssertTrue("\(error)".contains("invalid interval \"soon\""))
        }
        // every: counts from the last run; with none, at once.
        let now = Date(timeIntervalSince1970: 1_000_000)
        let every = try ScheduleSpec.interval("1h")
        XCTAssertEqual(every.next(after: now, lastRun: nil, in: utc), now)
        XCTAssertEqual(every.next(after: now, lastRun: now.addingTimeInterval(-600), in: utc), now.addingTimeInterval(3000))
    }
}
