import Lua
import XCTest


final class QuantitiesTests: XCTestCase {
    func testParseDuration() {
        let valid: [(String, Double)] = [
            ("0", 0), ("90", 90), ("1.5", 1.5), ("90s", 90), ("250ms", 0.25), ("5m", 300), ("1h", 3600),
            ("1h30m", 5400), ("1d", 86_400), ("1d2h3m4s5ms", 93_784.005), ("1h 30m", 5400), (" 2s ", 2),
            ("1.5h", 5400), ("0s", 0), ("0.5ms", 0.0005),
        ]
        for (text, seconds) in valid {
            XCTAssertEqual(Quantities.parseDuration(text) ?? -1, seconds, accuracy: 1e-9, text)
        }
        let invalid = [
            "", " ", "-5s", "+5s", "5", "s", "5x", "5 seconds", "1m1h", "1s1s", "1h30", "1.s", ".5s", "nan", "inf",
            "1e3s", "5S", "5M", String(repeating: "9", count: 400) + "s", "1_000s",
        ].filter { $0 != "5" }
        for text in invalid {
            XCTAssertNil(Quantities.parseDuration(text), text)
        }
    }

    func testParseSize() {
        let valid: [(String, Int)] = [
            ("0", 0), ("65536", 65536), ("512KB", 512 << 10), ("64MB", 64 << 20), ("1GB", 1 << 30),
            ("1KiB", 1024), ("64MiB", 64 << 20), ("1GiB", 1 << 30), ("2TB", 2 << 40), ("64mb", 64 << 20),
            ("64 MB", 64 << 20), ("1.5K", 1536), ("10B", 10), ("1M", 1 << 20), ("0.5KB", 512),
            ("8388607TiB", 8_388_607 << 40),
        ]
        for (text, bytes) in valid {
            XCTAssertEqual(Quantities.parseSize(text), bytes, text)
        }
        let invalid = [
            "", "-1", "-1MB", "64XB", "MB", "64 M B", "1e6", "nan", "inf", "8388608TiB", "99999999999999999999",
            "1.0e3KB", "64MB!", "1,000",
        ]
        for text in invalid {
            XCTAssertNil(Quantities.parseSize(text), text)
        }
    }

    func testFromTOMLValues() {
        XCTAssertEqual(Quantities.duration(.integer(5)), 5)
        XCTAssertEqual(Quantities.duration(.float(0.25)), 0.25)
        XCTAssertEqual(Quantities.duration(.string("1m")), 60)
        XCTAssertNil(Quantities.duration(.integer(-1)))
        XCTAssertNil(Quantities.duration(.float(.nan)))
        XCTAssertNil(Quantities.duration(.float(.infinity)))
        XCTAssertNil(Quantities.duration(.float(-0.5)))
        XCTAssertNil(Quantities.duration(.boolean(true)))
        XCTAssertNil(Quantities.duration(.datetime("07:32:00")))

        XCTAssertEqual(Quantities.size(.integer(1024)), 1024)
        XCTAssertEqual(Quantities.size(.float(2048)), 2048)
        XCTAssertEqual(Quantities.size(.string("1KB")), 1024)
        XCTAssertNil(Quantities.size(.float(1.5)))
        XCTAssertNil(Quantities.size(.float(1e30)))
        XCTAssertNil(Quantities.size(.float(.nan)))
        XCTAssertNil(Quantities.size(.integer(-1)))
        XCTAssertNil(Quantities.size(.array([])))
    }

    func testFormatDuration() {
        let cases: [(Double, String)] = [
            (0, "0s"), (0.25, "250ms"), (0.0005, "0.5ms"), (5, "5s"), (90, "1m30s"), (5400, "1h30m"),
            (86_400, "1d"), (93_784.005, "1d2h3m4.005s"), (2.5, "2.5s"), (3600, "1h"), (.infinity, "unlimited"),
            (-90, "-1m30s"), (.nan, "nan"),
        ]
        for (seconds, text) in cases {
            XCTAssertEqual(Quantities.formatDuration(seconds), text, "\(seconds)")
        }
        for text in ["250ms", "5s", "1m30s", "1h30m", "1d", "1d2h3m4.005s"] {
            XCTAssertEqual(Quantities.formatDuration(Quantities.parseDuration(text)!), text)
        }
    }

    func testFormatSize() {
        let cases: [(Int, String)] = [
            (0, "0 B"), (100, "100 B"), (1023, "1023 B"), (1024, "1 KiB"), (1536, "1.5 KiB"), (64 << 20, "64 MiB"),
            (1 << 30, "1 GiB"), (1_000_000, "976.56 KiB"), (-1024, "-1 KiB"), (.max, "8 EiB"),
        ]
        for (bytes, text) in cases {
            XCTAssertEqual(Quantities.formatSize(bytes), text, "\(bytes)")
        }
    }
}
