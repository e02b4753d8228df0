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

    func testUnknownScenarioIsAUsageError() throws {
        let result = try lookout(["sim", "nightscout", "--scenario", "tsunami"])
        assertExit(result, 2)
        XCTAssertTrue(result.stderr.contains("unknown scenario 'tsunami'"), result.stderr)
    }
}
