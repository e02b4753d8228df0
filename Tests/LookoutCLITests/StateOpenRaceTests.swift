import Foundation
import XCTest

/// Processes that open a new state database at the same moment (six `lookout run` started at
/// once, as RemoteBudgetCommandTests does) all open it: none fails at once with "database is
/// locked" while another switches it to WAL or applies the migrations.
final class StateOpenRaceTests: CLITestCase, @unchecked Sendable {
    func testProcessesOpeningANewStateDatabaseAtOnceAllSucceed() throws {
        let script = """
            local store = require "store"
            local ok, err = store.set("k", arg[1])
            if ok then ok, err = store.get("k") end
            print(ok and "ok" or ("failed: " .. tostring(type(err) == "table" and err.message or err)))
            """
        try writeFile("open.lua", script)
        for round in 0..<6 {
            // A fresh state directory each round: the race is in creating the database.
            let env = ["LOOKOUT_HOME": home + "/round\(round)"]
            try FileManager.default.createDirectory(atPath: home + "/round\(round)", withIntermediateDirectories: true)
            let processes = try (0..<8).map { i in try launch(["run", "open.lua", "\(i)"], environment: env) }
            for process in processes {
                process.closeInput()
                let result = try XCTUnwrap(process.waitForExit(timeout: 120))
                assertExit(result, 0)
                XCTAssertEqual(result.stdout, "ok\n", "round \(round): \(result)")
            }
        }
    }
}
