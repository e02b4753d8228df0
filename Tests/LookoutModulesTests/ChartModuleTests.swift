import Foundation
import LookoutTestSupport
import Lua
import XCTest

@testable import LookoutConfig
@testable import LookoutModules

final class ChartModuleTests: XCTestCase {
    private let t0 = 1_714_557_600_000.0

    /// 5-minute readings from 100 to 250 and back, with a 30-minute hole in the middle.
    private func series() -> ChartSeries {
        var points: [ChartSeries.Point] = []
        for i in 0..<24 where !(10..<16).contains(i) {
            points.append(.init(time: t0 + Double(i) * 300_000, value: i < 12 ? 100 + Double(i) * 12 : 250 - Double(i - 12) * 12))
        }
        return ChartSeries(points: points, hasTimes: true)
    }

    func testBrailleDotsAndLines() {
        var canvas = BrailleCanvas(columns: 2, rows: 1)
        canvas.set(0, 0)
        canvas.set(1, 3)
        canvas.set(9, 9)  // outside: ignored
        XCTAssertEqual(canvas.character(column: 0, row: 0), "\u{2881}")  // dots 1 and 8
        XCTAssertFalse(canvas.isSet(column: 1, row: 0))
        canvas.line(0, 3, 3, 0)
        XCTAssertTrue(canvas.isSet(column: 1, row: 0))
    }

    func testTerminalPlotHasAxisRangeTimesAndGap() {
        var options = ChartOptions()
        options.low = 70
        options.high = 180
        options.title = "BG"
        options.unit = "mg/dL"
        options.timeZone = TimeZone(identifier: "UTC")!
        let text = TerminalChart(width: 46, height: 10).render(series(), options: options)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(lines.count, 12, text)
        XCTAssertEqual(lines[0], "BG")
        XCTAssertTrue(lines[1].hasPrefix("215 ┤"), text)
        XCTAssertTrue(lines.contains { $0.hasPrefix("180 ┤") }, text)
        XCTAssertTrue(lines[10].hasPrefix(" 70 ┤"), text)  // the low threshold shares the bottom row with the axis end (63): the threshold wins
        XCTAssertTrue(lines[11].hasPrefix("     10:00"), lines[11])
        XCTAssertTrue(lines[11].hasSuffix("11:55  mg/dL"), lines[11])
        // The hole (50 to 75 minutes, columns ~19 to ~31) leaves whole columns empty in every row
        // (but for the dotted range edges).
        let plot = lines[1...10].map { Array($0.dropFirst(5)) }
        let empty = (0..<46).filter { c in plot.allSatisfy { $0[c] == "\u{2800}" || $0[c] == "\u{2802}" || $0[c] == "\u{2810}" } }
        XCTAssertTrue(empty.contains(25), "no gap in \(empty)\n\(text)")
        XCTAssertFalse(empty.contains(5))
    }

    func testSVGHasBandLinesBrokenAtTheGapAndColouredPoints() {
        var options = ChartOptions()
        options.low = 70
        options.high = 180
        let svg = SVGChart().render(series(), options: options)
        XCTAssertTrue(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        XCTAssertEqual(svg.components(separatedBy: "class=\"target\"").count - 1, 1)
        XCTAssertEqual(svg.components(separatedBy: "<polyline").count - 1, 2, "the gap splits the line in two")
        XCTAssertEqual(svg.components(separatedBy: "<circle").count - 1, 18)
        XCTAssertEqual(svg.components(separatedBy: "fill=\"#f9a825\"").count - 1, 5, "values above 180")
    }

    func testSeriesShapes() throws {
        let numbers = try ChartSeries.read(.array([.int(1), .double(2.5)]))
        XCTAssertEqual(numbers.points.map(\.value), [1, 2.5])
        XCTAssertFalse(numbers.hasTimes)
        let entries = try ChartSeries.read(.array([
            .object(["date": .int(2000), "sgv": .int(180)]),
            .object(["date": .int(1000), "sgv": .int(90)]),
            .object(["date": .int(1500), "type": .text("cal")]),  // no value: skipped
        ]), scale: 1 / 18.0182)
        XCTAssertEqual(entries.points.map(\.time), [1000, 2000])
        XCTAssertEqual(entries.points[0].value, 90 / 18.0182, accuracy: 1e-9)
        XCTAssertThrowsError(try ChartSeries.read(.array([.int(1), .object(["date": .int(5), "v": .int(2)])])))
        XCTAssertThrowsError(try ChartSeries.read(.text("x")))
    }

    func testLuaPlotSVGSaveAndErrors() async throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-chart-\(UUID())")
        let paths = LookoutPaths(configFile: home.appendingPathComponent("config.toml").path, stateDirectory: home.path)
        let (transcript, outcome) = try await runLua("""
            local chart = require "chart"
            local s = {}
            for i = 0, 11 do s[#s + 1] = { date = 1714557600000 + i * 300000, sgv = 60 + i * 20 } end
            local text = chart.plot(s, { low = 70, high = 180, width = 30, height = 6, tz = "UTC" })
            print(select(2, text:gsub("\\n", "")) + 1)
            local svg = chart.svg(s, { low = 3.9, high = 10, mmol = true, title = "A < B" })
            print(svg:find("mmol/L", 1, true) ~= nil, svg:find("A &lt; B", 1, true) ~= nil)
            local path = assert(chart.save(svg, "daily.svg"))
            print(path:match("reports/daily.svg$") ~= nil)
            print(pcall(chart.save, svg, "../escape.svg"))
            print(pcall(chart.plot, s, { low = 200, high = 100 }))
            print(pcall(chart.plot, s, { width = 3 }))
            print(pcall(chart.plot, s, { tz = "Mars/Olympus" }))
            """, modules: [ChartModule(paths: paths)])
        XCTAssertEqual(transcript.errors.map(\.description), [])
        XCTAssertEqual(outcome.exitCode, 0)
        let lines = transcript.lines
        XCTAssertEqual(Array(lines.prefix(3)), ["7", "true\ttrue", "true"])
        XCTAssertTrue(lines[3].contains("expected a plain file name"), lines[3])
        XCTAssertTrue(lines[4].contains("opts.low must be below opts.high"), lines[4])
        XCTAssertTrue(lines[5].contains("opts.width: expected a whole number from 10 to 400"), lines[5])
        XCTAssertTrue(lines[6].contains("unknown time zone 'Mars/Olympus'"), lines[6])
        let saved = try String(contentsOfFile: home.path + "/reports/daily.svg", encoding: .utf8)
        XCTAssertTrue(saved.hasSuffix("</svg>\n"))
    }
}
