import Foundation
import LookoutSim
import LookoutStore
import LookoutTestSupport
import LookoutWire
import Lua
import XCTest

@testable import LookoutConfig
@testable import LookoutModules

/// One trend rule: the demo's readings and the simulator's generated entries carry the arrow
/// `nightscout.direction()` gives for the slope from the reading before, on every reading.
final class TrendRuleTests: XCTestCase {
    /// The directions `nightscout.direction()` gives for `slopes`, in order.
    private func luaDirections(_ slopes: [Double]) async throws -> [String] {
        let list = slopes.map { String($0) }.joined(separator: ", ")
        let (transcript, outcome) = try await runLua(
            "local nightscout = require 'nightscout'\nfor _, s in ipairs { \(list) } do print(nightscout.direction(s)) end",
            modules: [NightscoutModule(config: try HostConfig(text: ""), store: try StateStore(), environment: [:])])
        XCTAssertEqual(outcome.exitCode, 0, transcript.errors.map(\.description).joined(separator: "\n"))
        return transcript.lines
    }

    func testGeneratedEntriesAgreeWithNightscoutDirection() async throws {
        let out = CGMGenerator(seed: 1, end: Date(timeIntervalSince1970: 1_767_225_600))
            .generate(days: 2, scenarios: Set(CGMGenerator.Scenario.allCases))
        var slopes: [Double] = [], given: [String] = []
        var previous: (time: Int64, mgdl: Double)?
        for e in out.entries {
            guard let t = e["date"]?.int64Value, let v = e["sgv"]?.doubleValue, let dir = e["direction"]?.stringValue else {
                return XCTFail("entry without date, sgv or direction: \(e)")
            }
            if let p = previous, t - p.time <= 600_000 {
                slopes.append((v - p.mgdl) / (Double(t - p.time) / 60_000))
                given.append(dir)
            }
            previous = (t, v)
        }
        XCTAssertGreaterThan(slopes.count, 500)
        let expected = try await luaDirections(slopes)
        let disagreements = zip(given, expected).enumerated().filter { $0.element.0 != $0.element.1 }
        XCTAssertEqual(disagreements.count, 0, "first: \(disagreements.prefix(5).map { "\(slopes[$0.offset]): \($0.element)" })")
    }

    func testDemoTraceAgreesWithNightscoutDirectionAndOpensLevel() async throws {
        let trace = DemoTrace(step: 5)
        let indices = Array(0..<(trace.cycle * 2))
        let slopes = indices.map { Double(trace.reading($0).sgv - trace.reading($0 - 1).sgv) / 5 }
        let expected = try await luaDirections(slopes)
        XCTAssertEqual(indices.map { trace.reading($0).direction }, expected)
        // The story opens level: no jump from the end of the previous cycle ("BG 131 DoubleDown").
        XCTAssertEqual(trace.reading(0).direction, "Flat")
        XCTAssertEqual(trace.reading(trace.cycle).direction, "Flat")
    }
}
