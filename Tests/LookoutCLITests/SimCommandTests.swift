import Foundation
import XCTest

/// `lookout sim nightscout` serves generated data that a script reads with `http`.
final class SimCommandTests: CLITestCase, @unchecked Sendable {
    func testNightscoutSimulatorServesGeneratedDataToAScript() throws {
        let sim = try launch(["sim", "nightscout", "--fill", "0.5", "--scenario", "overnightLow", "--token", "reader:readable"])
        sim.closeInput()
        guard sim.waitForOutput(containing: "serving until Ctrl-C\n") else { return }
        let lines = sim.output().split(separator: "\n").map(String.init)
        let url = try XCTUnwrap(lines.first?.components(separatedBy: " at ").last)
        let token = try XCTUnwrap(lines.first { $0.hasPrefix("token reader") }?.components(separatedBy: ": ").last)
        XCTAssertTrue(url.hasPrefix("http://127.0.0.1:"), url)

        let result = try runScript("""
            local http = require "http"
            local r = assert(http.get(arg[1] .. "/api/v1/entries.json?count=5&token=" .. arg[2]))
            print(r.status, #r.json, r.json[1].type, math.type(r.json[1].sgv))
            local denied = assert(http.get(arg[1] .. "/api/v3/entries"))  -- v3 needs a Bearer JWT
            print(denied.status)
            """, arguments: [url, token])
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "200\t5\tsgv\tinteger\n401\n")

        sim.send(signal: SIGINT)
        let ended = try XCTUnwrap(sim.waitForExit(timeout: 20))
        assertExit(ended, 0)
    }

    func testFillKeepsAddingLiveReadings() throws {
        // --speed 300: a reading every second (each still stands for 5 minutes).
        let sim = try launch(["sim", "nightscout", "--fill", "0.1", "--speed", "300", "--token", "reader:readable"])
        sim.closeInput()
        guard sim.waitForOutput(containing: "serving until Ctrl-C\n") else { return }
        let lines = sim.output().split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains("a live reading every second (each stands for 5 minutes)"), sim.output())
        let url = try XCTUnwrap(lines.first?.components(separatedBy: " at ").last)
        let token = try XCTUnwrap(lines.first { $0.hasPrefix("token reader") }?.components(separatedBy: ": ").last)
        let script = """
            local http = require "http"
            local r = assert(http.get(arg[1] .. "/api/v1/entries.json?count=1000&find[date][$gte]=0&token=" .. arg[2]))
            print(#r.json)
            """
        let before = try runScript(script, arguments: [url, token])
        assertExit(before, 0)
        let filled = try XCTUnwrap(Int(before.stdout.trimmingCharacters(in: .newlines)))
        // Two more lines: a reading is printed after it is stored, so the second was stored after
        // the count above.
        let seen = sim.output().components(separatedBy: "live reading ").count - 1
        guard sim.waitForOutput(timeout: 20, "two more live readings", until: { $0.components(separatedBy: "live reading ").count - 1 > seen + 1 })
        else { return }
        let after = try runScript(script, arguments: [url, token])
        XCTAssertGreaterThan(Int(after.stdout.trimmingCharacters(in: .newlines)) ?? 0, filled, after.description)
        sim.send(signal: SIGINT)
        let ended = try XCTUnwrap(sim.waitForExit(timeout: 20))
        assertExit(ended, 0)
    }

    func testUnknownScenarioIsAUsageError() throws {
        let result = try lookout(["sim", "nightscout", "--scenario", "tsunami"])
        assertExit(result, 2)
        XCTAssertTrue(result.stderr.contains("unknown scenario 'tsunami'"), result.stderr)
    }

    /// One spelling for scenario names, as `lookout test` has them; a close miss is named.
    func testScenarioNamesAreSpelledAsLookoutTestSpellsThem() throws {
        let help = try lookout(["sim", "nightscout", "--help"])
        XCTAssertTrue(help.stdout.contains("overnight-low"), help.stdout)
        XCTAssertFalse(help.stdout.contains("overnightLow"), help.stdout)
        let typo = try lookout(["sim", "nightscout", "--scenario", "overnight-lwo"])
        assertExit(typo, 2)
        XCTAssertTrue(typo.stderr.contains("unknown scenario 'overnight-lwo' (did you mean overnight-low?)"), typo.stderr)
    }
}
