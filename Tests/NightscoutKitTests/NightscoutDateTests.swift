import Foundation
import XCTest
@testable import NightscoutKit
import LookoutWire

final class NightscoutDateTests: XCTestCase {
    func testISOParsingTable() throws {
        let base = utcMillis(2024, 1, 2, 3, 4, 5)
        let cases: [(String, Int64, Int?)] = [
            ("2024-01-02T03:04:05.678Z", base + 678, 0),
            ("2024-01-02T03:04:05Z", base, 0),              // AndroidAPS, no ms
            ("2024-01-02T03:04:05.6Z", base + 600, 0),
            ("2024-01-02T03:04:05.678912Z", base + 678, 0), // extra precision truncated
            ("2024-01-02T03:04:05,678Z", base + 678, 0),    // comma fraction
            ("2024-01-02T05:04:05.000+02:00", base, 120),
            ("2024-01-01T22:04:05-0500", base, -300),
            ("2024-01-02T08:34:05+05:30", base, 330),
            ("2024-01-02T03:04:05+00", base, 0),
            ("2024-01-02T03:04:05", base, nil),            // no zone → UTC
            ("2024-01-02 03:04:05Z", base, 0),
            ("2024-01-02", utcMillis(2024, 1, 2), nil),
            ("1969-12-31T23:59:59.999Z", -1, 0),
            ("2000-02-29T12:00:00Z", utcMillis(2000, 2, 29, 12), 0),
        ]
        for (text, ms, offset) in cases {
            let d = try XCTUnwrap(NightscoutDate(string: text), text)
            XCTAssertEqual(d.epochMilliseconds, ms, text)
            XCTAssertEqual(d.utcOffsetMinutes, offset, text)
        }
    }

    func testRejectsGarbage() {
        for text in ["", "yesterday", "2024-13-01T00:00:00Z", "2024-01-02T03:04:05.Z", "2024-01-02T03:04:05+25:00", "2024-01-02T03:04:05Zjunk"] {
            XCTAssertNil(NightscoutDate(string: text), text)
        }
        XCTAssertThrowsError(try decode(NightscoutDate.self, #""not a date""#))
    }

    func testNumbersAndBothForms() throws {
        let d = try decode(NightscoutDate.self, "1405763055000")
        XCTAssertEqual(d.wireForm, .epochMilliseconds)
        XCTAssertEqual(d.isoString, "2014-07-19T09:44:15.000Z")
        XCTAssertEqual(d.isoStringWithoutMilliseconds, "2014-07-19T09:44:15Z")
        XCTAssertEqual(d.date, Date(timeIntervalSince1970: 1_405_763_055))
        XCTAssertEqual(String(decoding: try JSONEncoder().encode(d), as: UTF8.self), "1405763055000")
        let s = try decode(NightscoutDate.self, #""1405763055000""#)
        XCTAssertEqual(s.epochMilliseconds, 1_405_763_055_000)
        let f = try decode(NightscoutDate.self, "1405763055000.7")
        XCTAssertEqual(f.epochMilliseconds, 1_405_763_055_000)
    }

    func testOriginalStringIsReEncoded() throws {
        let d = try decode(NightscoutDate.self, #""2024-01-01T22:04:05-05:00""#)
        XCTAssertEqual(String(decoding: try JSONEncoder().encode(d), as: UTF8.self), #""2024-01-01T22:04:05-05:00""#)
        XCTAssertEqual(d.isoString, "2024-01-02T03:04:05.000Z")
        XCTAssertEqual(d.asISOString.wireForm, .iso("2024-01-02T03:04:05.000Z"))
        XCTAssertEqual(d.asEpochMilliseconds.wireForm, .epochMilliseconds)
    }

    func testFromDate() {
        let date = Date(timeIntervalSince1970: 1_704_164_645.678)
        let iso = NightscoutDate(date, asISOString: true)
        XCTAssertEqual(iso.wireForm, .iso("2024-01-02T03:04:05.678Z"))
        XCTAssertEqual(NightscoutDate(date).epochMilliseconds, 1_704_164_645_678)
        XCTAssertLessThan(NightscoutDate(epochMilliseconds: 1), NightscoutDate(epochMilliseconds: 2))
    }

    func testFormattingRoundTripsAcrossYears() {
        for ms: Int64 in [0, 951_782_400_000, 1_709_164_800_123, 4_102_444_799_999, -86_400_001] {
            let text = NightscoutDate(epochMilliseconds: ms).isoString
            XCTAssertEqual(NightscoutDate(string: text)?.epochMilliseconds, ms, text)
        }
    }
}

final class HTTPDateTests: XCTestCase {
    func testFormatAndParse() {
        let ms = utcMillis(2018, 10, 17, 5, 13, 0, 999)
        XCTAssertEqual(HTTPDate.format(epochMilliseconds: ms), "Wed, 17 Oct 2018 05:13:00 GMT")
        XCTAssertEqual(HTTPDate.format(epochMilliseconds: utcMillis(2021, 2, 11, 15, 32, 3, 148)), "Thu, 11 Feb 2021 15:32:03 GMT")
        XCTAssertEqual(HTTPDate.format(epochMilliseconds: 0), "Thu, 01 Jan 1970 00:00:00 GMT")
        let table: [(String, Int64?)] = [
            ("Wed, 17 Oct 2018 05:13:00 GMT", utcMillis(2018, 10, 17, 5, 13)),
            ("17 Oct 2018 07:13:00 +0200", utcMillis(2018, 10, 17, 5, 13)),
            ("Wed, 17 Oct 2018 00:13 -0500", utcMillis(2018, 10, 17, 5, 13)),
            ("Wed, 17 Foo 2018 05:13:00 GMT", nil),
            ("yesterday", nil),
        ]
        for (text, expected) in table { XCTAssertEqual(HTTPDate.parse(text), expected, text) }
        XCTAssertEqual(NightscoutDate(string: "Wed, 17 Oct 2018 05:13:00 GMT")?.epochMilliseconds, utcMillis(2018, 10, 17, 5, 13))
    }

    func testHostileNumericDatesAreErrorsNotTraps() throws {
        for text in ["1e300", "-1e300", "9.3e18"] {
            let json = Data("{\"date\": \(text), \"sgv\": 100, \"type\": \"sgv\"}".utf8)
            let entry = try JSONDecoder().decode(Entry.self, from: json)
            XCTAssertNil(entry.common.date, text)  // not a date: left in `extra`, as the server sent it
            XCTAssertNotNil(entry.extra["date"], text)
        }
        XCTAssertEqual(NightscoutDate(Date(timeIntervalSince1970: 1e300)).epochMilliseconds, Int64(NightscoutDate.largestMilliseconds))
        XCTAssertEqual(NightscoutDate(epochMilliseconds: .max).isoString.isEmpty, false)
    }
}
