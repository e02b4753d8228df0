import Foundation
import LookoutWire
import XCTest

/// The one ISO-8601 / HTTP-date reader and writer, with Signal K's and Nightscout's rules.
final class DateTests: XCTestCase {
    func testRFC3339IsStrict() {
        let cases: [(String, Double?)] = [
            ("2010-01-07T07:18:44Z", 1262848724), ("2014-08-15T16:00:00.081Z", 1408118400.081),
            ("2014-08-15T18:00:00.081+02:00", 1408118400.081), ("2014-08-15t16:00:00z", 1408118400),
            ("2014-08-15T16:00:00.123456789Z", 1408118400.123456789),
            ("2014-08-15T16:00:00", nil), ("2014-13-15T16:00:00Z", nil), ("2014-02-30T16:00:00Z", nil),
            ("2014-08-15T16:00:00.Z", nil), ("2014-08-15T16:00Z", nil), ("2014-08-15 16:00:00Z", nil),
            ("2014-08-15T16:00:00+0200", nil), ("2014-08-15", nil), ("yesterday", nil), ("", nil),
        ]
        for (text, expected) in cases {
            let t = ISO8601.parse(text, rules: .rfc3339)
            if let expected {
                XCTAssertEqual(t?.date.timeIntervalSince1970 ?? .nan, expected, accuracy: 1e-6, text)
            } else {
                XCTAssertNil(t, text)
            }
        }
    }

    func testNightscoutRulesAreLenient() {
        XCTAssertEqual(ISO8601.parse("2014-07-19T02:44:15-07:00", rules: .nightscout)?.epochMilliseconds, 1_405_763_055_000)
        XCTAssertEqual(ISO8601.parse("2014-07-19T02:44:15-07:00", rules: .nightscout)?.offsetMinutes, -420)
        XCTAssertEqual(ISO8601.parse("2024-01-02T03:04:05,678+0100", rules: .nightscout)?.epochMilliseconds, 1_704_161_045_678)
        XCTAssertEqual(ISO8601.parse("2024-09-09", rules: .nightscout)?.epochMilliseconds, 1_725_840_000_000)
        XCTAssertEqual(ISO8601.parse("2024-09-09 12:00", rules: .nightscout)?.epochMilliseconds, 1_725_883_200_000)
        XCTAssertNil(ISO8601.parse("2024-09-09 12:00", rules: .nightscout)?.offsetMinutes)
        XCTAssertEqual(ISO8601.parse("2024-09-09T24:00:00Z", rules: .nightscout)?.epochMilliseconds, 1_725_926_400_000)
        XCTAssertEqual(ISO8601.parse("2024-09-09T12:00:00.1239Z", rules: .nightscout)?.epochMilliseconds, 1_725_883_200_123)
        XCTAssertNil(ISO8601.parse("2024-09-09T12:00:00+25:00", rules: .nightscout))
        XCTAssertNil(ISO8601.parse("yesterday", rules: .nightscout))
    }

    func testFormats() {
        XCTAssertEqual(ISO8601.format(epochMilliseconds: 1_405_763_055_000), "2014-07-19T09:44:15.000Z")
        XCTAssertEqual(ISO8601.format(epochMilliseconds: -1), "1969-12-31T23:59:59.999Z")
        XCTAssertEqual(ISO8601.format(epochMilliseconds: 1_405_763_055_123, milliseconds: false), "2014-07-19T09:44:15Z")
        XCTAssertEqual(ISO8601.format(Date(timeIntervalSince1970: 1408118400.081)), "2014-08-15T16:00:00.081Z")
        XCTAssertEqual(HTTPDate.format(epochMilliseconds: 1_539_753_180_000), "Wed, 17 Oct 2018 05:13:00 GMT")
        XCTAssertEqual(HTTPDate.format(epochMilliseconds: 0), "Thu, 01 Jan 1970 00:00:00 GMT")
        XCTAssertEqual(HTTPDate.parse("Wed, 17 Oct 2018 05:13:00 GMT"), 1_539_753_180_000)
        XCTAssertEqual(HTTPDate.parse("17 Oct 2018 07:13 +0200"), 1_539_753_180_000)
        XCTAssertNil(HTTPDate.parse("2018-10-17"))
    }

    func testRetryAfter() {
        let now = Date(timeIntervalSince1970: 1_539_753_000)
        XCTAssertEqual(HTTPDate.retryAfter(" 120 ", now: now), 120)
        XCTAssertEqual(HTTPDate.retryAfter("Wed, 17 Oct 2018 05:13:00 GMT", now: now), 180)
        XCTAssertEqual(HTTPDate.retryAfter("Wed, 17 Oct 2018 05:00:00 GMT", now: now), 0)
        XCTAssertNil(HTTPDate.retryAfter("-5", now: now))
        XCTAssertNil(HTTPDate.retryAfter("soon", now: now))
    }

    func testCalendar() {
        XCTAssertEqual(CivilCalendar.days(year: 1970, month: 1, day: 1), 0)
        XCTAssertEqual(CivilCalendar.days(year: 2000, month: 3, day: 1), 11017)
        XCTAssertTrue(CivilCalendar.date(days: 11017) == (2000, 3, 1))
        XCTAssertEqual(CivilCalendar.daysIn(month: 2, year: 2000), 29)
        XCTAssertEqual(CivilCalendar.daysIn(month: 2, year: 1900), 28)
    }

    /// The clock in a zone from its offset (the chart's labels; no DateFormatter).
    func testWallClock() throws {
        let kolkata = try XCTUnwrap(TimeZone(identifier: "Asia/Kolkata"))
        XCTAssertEqual(WallClock(Date(timeIntervalSince1970: 0), in: kolkata).hourMinute, "05:30")
        let berlin = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        // 2024-07-01 12:34:56 UTC is summer time in Berlin (+2).
        XCTAssertEqual(WallClock(Date(timeIntervalSince1970: 1_719_837_296), in: berlin).hourMinuteSecond, "14:34:56")
        XCTAssertEqual(WallClock(epochMilliseconds: 0, offsetSeconds: -12_600).monthDayHourMinute, "Dec 31 20:30")
        let end = WallClock(epochMilliseconds: .max, offsetSeconds: 50_400)  // saturates, no trap
        XCTAssertEqual(end.year, 292_278_994)
        XCTAssertEqual(WallClock(epochMilliseconds: .min, offsetSeconds: -50_400).year, -292_275_055)
    }
}
