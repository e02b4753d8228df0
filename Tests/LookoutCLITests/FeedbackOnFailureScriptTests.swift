import Foundation
import LookoutSim
import XCTest

/// `Scripts/feedback-on-failure.lua` under `lookout serve`: a script that keeps crashing is filed
/// once as a Northlight bug, with the secrets in its error message removed.
final class FeedbackOnFailureScriptTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is only used from the test's own task.

    private static let simulator = NorthlightSimulator()
    private actor Started {
        private var url: URL?
        func url(of sim: NorthlightSimulator) async throws -> URL {
            if let url { return url }
            let started = try await sim.start()
            url = started
            return started
        }
    }
    private static let started = Started()

    func testRepeatedCrashesBecomeOneRedactedBugReport() async throws {
        let url = try await Self.started.url(of: Self.simulator)
        let key = await Self.simulator.addProject(tier: .growth)
        let port = try freePort()
        try """
            [northlight.default]
            url = "\(url.absoluteString)"
            api_key_env = "NL_KEY"
            [scripts."feedback-on-failure.lua".settings]
            status_url = "http://127.0.0.1:\(port)"
            every = "1s"
            failures = 2
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        try writeFile("Scripts/feedback-on-failure.lua",
                      try String(contentsOf: repository.appendingPathComponent("Scripts/feedback-on-failure.lua"), encoding: .utf8))
        let secret = "0123456789abcdef0123456789abcdef"
        try writeFile("Scripts/broken.lua", """
            error("cannot reach https://anna:hunter2@ns.example.com/api/v1?token=\(secret)")
            """)
        let serve = try launch(["serve", "--status-port", String(port)], environment: ["NL_KEY": key])
        XCTAssertTrue(serve.waitForOutput(.stderr, containing: "feedback-on-failure.lua: reported broken.lua (sent)", timeout: 60))
        serve.terminate()

        let bugs = await Self.simulator.bugs(apiKey: key)
        XCTAssertEqual(bugs.count, 1, "\(bugs)")
        let text = bugs.first?.jsonString ?? ""
        XCTAssertTrue(text.contains("Lookout script broken.lua failed"), text)
        XCTAssertTrue(text.contains("‹redacted›"), text)
        XCTAssertFalse(text.contains("hunter2") || text.contains(secret), text)
    }
}
