import Foundation
import XCTest

/// Every ready automation in `Scripts/` passes its scenarios (`Scripts/scenarios/NAME.*.lua`)
/// under `lookout test`, and every script has at least one — except those that need `lookout
/// serve` itself, which have a test of their own (`coveredElsewhere`).
final class ReadyScriptsTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    private var repository: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// Scripts tested by running them under `lookout serve`.
    private let coveredElsewhere = ["feedback-on-failure.lua": "FeedbackOnFailureScriptTests"]

    func testEveryScriptPassesItsScenarios() throws {
        let scripts = repository + "/Scripts"
        let files = try FileManager.default.contentsOfDirectory(atPath: scripts).filter { $0.hasSuffix(".lua") }.sorted()
        let scenarios = try FileManager.default.contentsOfDirectory(atPath: scripts + "/scenarios").filter { $0.hasSuffix(".lua") }.sorted()
        XCTAssertFalse(files.isEmpty)
        for script in files {
            let name = String(script.dropLast(4))
            let mine = scenarios.filter { $0.hasPrefix(name + ".") }
            XCTAssertFalse(mine.isEmpty && coveredElsewhere[script] == nil, "\(script) has no scenario in Scripts/scenarios/")
            for scenario in mine {
                let run = try lookout(["test", scripts + "/" + script, "--scenario", scripts + "/scenarios/" + scenario], timeout: 120)
                XCTAssertEqual(run.exitCode, 0, "\(script) with \(scenario):\n\(run.stdout)\n\(run.stderr)")
            }
        }
    }
}
