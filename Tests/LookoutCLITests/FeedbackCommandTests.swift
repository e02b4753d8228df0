import Foundation
import LookoutSim
import XCTest

/// `lookout feedback`, `lookout bug` and `lookout sim northlight`.
final class FeedbackCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is only used from the test's own task.

    /// One simulator for the process (stopping a server while connections arrive can trap in NIO).
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

    /// A config with `[northlight.app]` on the simulator and `[northlight.offline]` where nothing
    /// listens; returns the environment with the key and the key.
    private func configure() async throws -> ([String: String], String) {
        let url = try await Self.started.url(of: Self.simulator)
        let key = await Self.simulator.addProject(tier: .starter)
        try """
            [northlight.app]
            url = "\(url.absoluteString)"
            api_key_env = "NL_KEY"
            email = "profile@example.com"
            [northlight.offline]
            url = "http://127.0.0.1:9/api/v1"
            api_key_env = "NL_KEY"
            timeout = "3s"
            [nightscout.home]
            url = "https://ns.example.com"
            token_env = "NS_TOKEN"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        return (["NL_KEY": key], key)
    }

    func testFeedbackWithOptions() async throws {
        let (env, key) = try await configure()
        let result = try lookout(["feedback", "--profile", "app", "--no-input", "--title", "Dark mode", "--description", "Please",
                                  "--category", "UI/UX"], environment: env)
        assertExit(result, 0)
        XCTAssertTrue(result.stdout.hasPrefix("sent feedback "), result.stdout)
        let id = String(result.stdout.dropFirst("sent feedback ".count).prefix(36))
        let stored = await Self.simulator.submission(apiKey: key, id: id)
        XCTAssertEqual(stored?.email, "profile@example.com")
        XCTAssertEqual(stored?.deviceInfo?["app_version"]?.stringValue, "0.1.0")
        XCTAssertFalse(result.stdout.contains(key) || result.stderr.contains(key))

        let missing = try lookout(["feedback", "--profile", "app", "--no-input", "--description", "no title"], environment: env)
        assertExit(missing, 1)
        XCTAssertTrue(missing.stderr.contains("invalid input: title: required"), missing.stderr)
    }

    func testBugFormWithDiagnostics() async throws {
        let (env, key) = try await configure()
        let answers = "Crash on start\nIt crashes\nevery time\n\nhigh\n1. start\n2. crash\n\n\ny\n"
        let result = try lookout(["bug", "--profile", "app"], stdin: answers, environment: env)
        assertExit(result, 0)
        XCTAssertTrue(result.stdout.hasPrefix("sent bug "), result.stdout)
        XCTAssertTrue(result.stderr.contains("Diagnostics summary:\nlookout 0.1.0\nos: "), result.stderr)
        XCTAssertTrue(result.stderr.contains("profiles: nightscout: home; northlight: app, offline"), result.stderr)
        let bugs = await Self.simulator.bugs(apiKey: key)
        let bug = try XCTUnwrap(bugs.last)
        XCTAssertEqual(bug["title"]?.stringValue, "Crash on start")
        XCTAssertEqual(bug["severity"]?.stringValue, "high")
        XCTAssertEqual(bug["steps_to_reproduce"]?.stringValue, "1. start\n2. crash")
        XCTAssertEqual(bug["user_email"]?.stringValue, "profile@example.com")
        let description = try XCTUnwrap(bug["description"]?.stringValue)
        XCTAssertTrue(description.hasPrefix("It crashes\nevery time\n\n--- diagnostics ---\nlookout 0.1.0\n"), description)
        XCTAssertFalse(description.contains(key))
        XCTAssertFalse(description.contains("ns.example.com"))
        XCTAssertFalse(result.stdout.contains(key) || result.stderr.contains(key))

        let declined = try lookout(["bug", "--profile", "app"], stdin: "Other\nText\n\nlow\n\n\nn\n", environment: env)
        assertExit(declined, 0)
        let after = await Self.simulator.bugs(apiKey: key)
        let last = try XCTUnwrap(after.last)
        XCTAssertEqual(last["description"]?.stringValue, "Text")
        XCTAssertEqual(last["severity"]?.stringValue, "low")
    }

    func testOfflineFeedbackWaitsInTheOutbox() async throws {
        let (env, key) = try await configure()
        let result = try lookout(["feedback", "--profile", "offline", "--no-input", "--title", "t", "--description", "d"], environment: env)
        assertExit(result, 0)
        XCTAssertTrue(result.stdout.hasPrefix("queued in the outbox as "), result.stdout)
        let list = try lookout(["outbox"], environment: env)
        assertExit(list, 0)
        XCTAssertTrue(list.stdout.contains("pending  1      northlight.feedback  northlight:http://127.0.0.1:9/api/v1#profile:offline"),
                      list.stdout)
        XCTAssertFalse(list.stdout.contains(key))
    }

    func testBugQueuedAfterA503IsSentByOutboxRetry() async throws {
        let (env, key) = try await configure()
        await Self.simulator.injectFailures(status: 503, count: 1)
        let queued = try lookout(["bug", "--profile", "app", "--no-input", "--title", "Busy", "--description", "d", "--severity", "low",
                                  "--diagnostics"], environment: env)
        assertExit(queued, 0)
        XCTAssertTrue(queued.stderr.contains("Diagnostics summary:"), queued.stderr)
        XCTAssertTrue(queued.stdout.hasPrefix("queued in the outbox as "), queued.stdout)
        XCTAssertTrue(queued.stdout.contains("server error (HTTP 503)"), queued.stdout)
        let id = String(queued.stdout.dropFirst("queued in the outbox as ".count).prefix(36))
        let before = await Self.simulator.bugs(apiKey: key)
        XCTAssertEqual(before.count, 0)

        let retry = try lookout(["outbox", "retry", id], environment: env)
        assertExit(retry, 0)
        let row = retry.stdout.split(separator: "\n").first { $0.hasPrefix(id) }?.split(separator: " ").map(String.init)
        XCTAssertEqual(row.map { Array($0.prefix(4)) }, [id, "sent", "2", "northlight.bug"], retry.stdout)
        let after = await Self.simulator.bugs(apiKey: key)
        XCTAssertEqual(after.map { $0["title"]?.stringValue }, ["Busy"])
        XCTAssertTrue(after.first?["description"]?.stringValue?.contains("--- diagnostics ---\nlookout 0.1.0") == true)
    }

    func testNorthlightSimulatorCommand() throws {
        let sim = try launch(["sim", "northlight", "--tier", "free"])
        sim.closeInput()
        guard sim.waitForOutput(containing: "serving until Ctrl-C\n") else { return }
        let lines = sim.output().split(separator: "\n").map(String.init)
        let url = try XCTUnwrap(lines.first?.components(separatedBy: " at ").last)
        let key = try XCTUnwrap(lines.first { $0.hasPrefix("test API key (free)") }?.components(separatedBy: ": ").last)
        XCTAssertTrue(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/api/v1"), url)
        try "[northlight.default]\nurl = \"\(url)\"\napi_key_env = \"NL_KEY\"\n".write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        for i in 1...5 {
            let sent = try lookout(["feedback", "--no-input", "--title", "item \(i)", "--description", "d"], environment: ["NL_KEY": key])
            assertExit(sent, 0)
        }
        let sixth = try lookout(["feedback", "--no-input", "--title", "sixth", "--description", "d"], environment: ["NL_KEY": key])
        assertExit(sixth, 1)
        XCTAssertTrue(sixth.stderr.contains("feedback limit reached"), sixth.stderr)

        sim.send(signal: SIGINT)
        let ended = try XCTUnwrap(sim.waitForExit(timeout: 20))
        assertExit(ended, 0)
    }
}
