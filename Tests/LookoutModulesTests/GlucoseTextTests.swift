import Foundation
import LookoutSim
import LookoutStore
import LookoutTestSupport
import LookoutWire
import Lua
import XCTest

@testable import LookoutConfig
@testable import LookoutModules

/// Glucose as people read it: `nightscout.format_bg`, `nightscout.arrow` and `client:units()`.
final class GlucoseTextTests: XCTestCase {
    private func run(_ source: String, config: String = "", environment: [String: String] = [:]) async throws -> [String] {
        let (transcript, outcome) = try await runLua(
            "local nightscout = require 'nightscout'\n" + source,
            modules: [NightscoutModule(config: try HostConfig(text: config), store: try StateStore(), environment: environment)])
        XCTAssertEqual(transcript.errors.map(\.description), [])
        XCTAssertEqual(outcome.exitCode, 0)
        return transcript.lines
    }

    func testFormatAndArrows() async throws {
        let lines = try await run("""
            print(nightscout.format_bg(62, { direction = "FortyFiveUp" }))
            print(nightscout.format_bg(132, { units = "mmol" }))
            print(nightscout.format_bg(132, { units = "mmol/L", other = false, direction = "DoubleDown" }))
            print(nightscout.format_bg({ sgv = 180, direction = "SingleUp" }))
            local arrows = {}
            for _, d in ipairs { "DoubleUp", "SingleUp", "FortyFiveUp", "Flat", "FortyFiveDown", "SingleDown", "DoubleDown", "NOT COMPUTABLE", "NONE" } do
              arrows[#arrows + 1] = "[" .. nightscout.arrow(d) .. "]"
            end
            print(table.concat(arrows, " "), "[" .. nightscout.arrow(nil) .. "]")
            print(pcall(nightscout.format_bg, 100, { unit = "mmol" }))
            print(pcall(nightscout.format_bg, 100, { units = "mg" .. "/l" }))
            print(pcall(nightscout.format_bg, "100"))
            print(pcall(nightscout.format_bg, 1e300))
            """)
        XCTAssertEqual(lines, [
            "62 mg/dL (3.4 mmol/L) ↗",
            "7.3 mmol/L (132 mg/dL)",
            "7.3 mmol/L ↓↓",
            "180 mg/dL (10.0 mmol/L) ↑",
            "[↑↑] [↑] [↗] [→] [↘] [↓] [↓↓] [?] []\t[]",
            "false\tbad argument #2 to 'nightscout.format_bg' (unknown option 'unit' (known: units, other, direction))",
            "false\tbad argument #2 to 'nightscout.format_bg' (opts.units: expected \"mg/dL\" or \"mmol\")",
            "false\tbad argument #1 to 'nightscout.format_bg' (number expected, got string)",
            "false\tbad argument #1 to 'nightscout.format_bg' (expected a glucose value in mg/dL (0 to 10000), got 1e+300)",
        ])
    }

    /// One rounding for glucose shown and glucose stored: half away from zero, as `upload_bg`
    /// stores `sgv` (seed 001), not printf's half to even.
    func testShownAndStoredGlucoseRoundTheSameWay() async throws {
        let site = try await NightscoutModuleSim.shared.start()
        let t0 = 1_714_730_400_000  // 2024-05-03T10:00:00Z
        let lines = try await run("""
            local home = assert(nightscout.client "home")
            for i, v in ipairs { 100.5, 101.5, 99.5 } do
              assert(home:upload_bg { sgv = v, date = \(t0) + i * 60000, device = "lua-rounding" })
            end
            local got = assert(home:entries { from = \(t0), find = { device = "lua-rounding" } })
            table.sort(got, function(a, b) return a.date < b.date end)
            local shown, stored = {}, {}
            for i, v in ipairs { 100.5, 101.5, 99.5 } do
              shown[i] = nightscout.format_bg(v, { other = false }); stored[i] = tostring(got[i].sgv)
            end
            print(table.concat(shown, ", ")); print(table.concat(stored, ", "))
            print(nightscout.format_bg(90.09, { units = "mmol", other = false }))
            """, config: """
            [nightscout.home]
            url = "\(site.url.absoluteString)"
            token_env = "NS_TOKEN"
            """, environment: ["NS_TOKEN": site.adminToken])
        XCTAssertEqual(lines, ["101 mg/dL, 102 mg/dL, 100 mg/dL", "101, 102, 100", "5.0 mmol/L"])
    }

    /// The unit comes from the profile's `units`, else the site's own setting; a profile's unit
    /// is also what `format_bg` shows when not told.
    func testUnitsFromTheProfileOrTheSite() async throws {
        let site = try await NightscoutModuleSim.shared.start()
        let lines = try await run("""
            local mmol = assert(nightscout.client "mmol")
            local plain = assert(nightscout.client "plain")
            print(mmol:units(), plain:units())
            print(nightscout.format_bg(120))
            local bad, err = nightscout.client "bad"
            print(bad, err.code, err.message:match("units") ~= nil)
            """, config: """
            [nightscout.mmol]
            url = "\(site.url.absoluteString)"
            token_env = "NS_TOKEN"
            units = "mmol"
            [nightscout.plain]
            url = "\(site.url.absoluteString)"
            token_env = "NS_TOKEN"
            [nightscout.bad]
            url = "\(site.url.absoluteString)"
            units = "stones"
            """, environment: ["NS_TOKEN": site.adminToken])
        XCTAssertEqual(lines, ["mmol\tmg/dL", "6.7 mmol/L (120 mg/dL)", "nil\tconfig\ttrue"])
    }
}
