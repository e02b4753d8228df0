import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `lookout serve` and `lookout status` as a user runs them.
final class ServeCommandTests: CLITestCase, @unchecked Sendable {
    private let tick = """
        local schedule = require "schedule"
        schedule.every(1, function() print("tick") end, { name = "tick" })
        """

    func testServeRunsScriptsReportsHealthAndDrainsOnSIGTERM() throws {
        try writeFile("Scripts/tick.lua", tick)
        try writeFile("Scripts/broken.lua", "error('broken on purpose')\n")
        let port = try freePort()
        let serve = try launch(["serve", "--status-port", String(port)])
        XCTAssertTrue(serve.waitForOutput(.stderr, containing: "status at http://127.0.0.1:\(port)/status"))
        XCTAssertTrue(serve.waitForOutput(containing: "[tick.lua] tick\n[tick.lua] tick"))
        XCTAssertTrue(serve.waitForOutput(.stderr, containing: "broken.lua: crashed (error in the main chunk: Scripts/broken.lua:1: broken on purpose); restarting in 1s"))
        XCTAssertTrue(serve.waitForOutput(.stderr, containing: "stack traceback:"))

        let status = try lookout(["status"])
        assertExit(status, 1)  // a script has crashed
        XCTAssertTrue(status.stdout.contains("tick.lua"), status.stdout)
        XCTAssertTrue(status.stdout.contains("· tick"), status.stdout)
        XCTAssertTrue(status.stdout.contains("every 1s"), status.stdout)
        XCTAssertTrue(status.stdout.contains("broken on purpose"), status.stdout)
        // Job and component rows are aligned with the script rows: each column starts where its heading does.
        let table = status.stdout.split(separator: "\n").map(String.init)
        func column(_ text: String, in line: String?) -> Int? {
            guard let line, let range = line.range(of: text) else { return nil }
            return line.distance(from: line.startIndex, to: range.lowerBound)
        }
        let stateColumn = try XCTUnwrap(column("STATE", in: table.first { $0.hasPrefix("NAME") }), status.stdout)
        XCTAssertEqual(column("running", in: table.first { $0.hasPrefix("tick.lua") }), stateColumn, status.stdout)
        XCTAssertEqual(column("every 1s", in: table.first { $0.contains("· tick") }), stateColumn, status.stdout)
        let json = try lookout(["status", "--json"])
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let entries = try XCTUnwrap(document["entries"] as? [[String: Any]])
        let tickEntry = try XCTUnwrap(entries.first { $0["name"] as? String == "tick.lua" })
        XCTAssertEqual(tickEntry["state"] as? String, "running")
        XCTAssertEqual((document["info"] as? [String: String])?["status_url"], "http://127.0.0.1:\(port)/status")

        serve.send(signal: SIGTERM)
        let result = try XCTUnwrap(serve.waitForExit(timeout: 30))
        assertExit(result, 0)
        XCTAssertTrue(result.stderr.contains("lookout serve: stopped"), result.stderr)
        assertExit(try lookout(["status"]), 3)  // no serve running any more
    }

    func testIsolateRunsEachScriptInAWorkerProcess() throws {
        try writeFile("Scripts/tick.lua", tick)
        try writeFile("Scripts/broken.lua", "error('broken on purpose')\n")
        let serve = try launch(["serve", "--isolate", "--status-port", "0"])
        XCTAssertTrue(serve.waitForOutput(containing: "[tick.lua] tick"))
        XCTAssertTrue(serve.waitForOutput(.stderr, containing: "broken.lua: crashed (worker exited with status 1); restarting in 1s"))
        serve.send(signal: SIGTERM)
        let result = try XCTUnwrap(serve.waitForExit(timeout: 30))
        assertExit(result, 0)
    }

    func testServeWithoutScriptsSaysWhatIsMissing() throws {
        let result = try lookout(["serve", "--status-port", "0"])
        assertExit(result, 2)
        XCTAssertTrue(result.stderr.contains("not found: Scripts"), result.stderr)
        assertExit(try lookout(["serve", "--trusted"]), 2)
    }
}
