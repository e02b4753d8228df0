import Foundation
import Logging
import LookoutSim
import Lua
import NightscoutKit
import NorthlightKit
import XCTest

@testable import LookoutConfig
@testable import LookoutModules
@testable import LookoutStore
import LookoutWire

/// Records every log message with its metadata.
final class RecordingLogHandler: LogHandler, @unchecked Sendable {
    // @unchecked Sendable: `records` is only touched under `lock`; the other fields are set
    // before the logger is shared (LogHandler requires settable properties).
    private let lock = NSLock()
    private var records: [String] = []
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        lock.withLock { records.append("\(event.level) \(event.message) \(merged)") }
    }

    var text: String { lock.withLock { records.joined(separator: "\n") } }
    var count: Int { lock.withLock { records.count } }
}

/// A whole Northlight session with every log line, error and the diagnostics summary recorded:
/// the API key appears in none of them.
final class NorthlightSessionSecretTests: XCTestCase {
    func testTheAPIKeyNeverAppearsInLogsErrorsOrDiagnostics() async throws {
        let site = try await FeedbackModuleSim.shared.start()
        let key = await site.sim.addProject(tier: .growth)  // 2 requests a minute
        let handler = RecordingLogHandler()
        let logger = Logger(label: "northlight-session") { _ in handler }
        let config = try HostConfig(text: """
            [northlight.app]
            url = "\(site.url.absoluteString)"
            api_key_env = "NL_SESSION_KEY"
            [nightscout.home]
            url = "https://user:hunter2@ns.example.com"
            token_env = "NS_TOKEN"
            """)
        let connection = try NorthlightConnection.profile("app", config: config, appVersion: "1.0",
                                                          environment: ["NL_SESSION_KEY": key])
        let client = NorthlightClient(configuration: connection.configuration, logger: logger)
        let store = try StateStore()
        var texts: [String] = [String(describing: connection.configuration), String(reflecting: client.configuration)]

        try await client.setUserIdentifier("session-user")
        let id = try await client.submitFeedback(title: "Session", description: "feedback")
        _ = try await client.roadmap()
        let diagnostics = await DiagnosticsSummary.collect(version: "1.0", config: config, store: store, secrets: [key])
        texts.append(diagnostics.text)
        XCTAssertTrue(diagnostics.text.contains("northlight: app"), diagnostics.text)
        XCTAssertTrue(diagnostics.text.contains("nightscout: home"), diagnostics.text)
        XCTAssertFalse(diagnostics.text.contains("hunter2"), "no URL credentials")
        XCTAssertFalse(diagnostics.text.contains("ns.example.com"), "no URLs")
        let bug = try await client.prepareBug(title: "Bug", description: "with diagnostics\n\n" + diagnostics.text, severity: .low)
        // Third request: over the growth limit of 2 → queued with the 429.
        let outcome = try await NorthlightSubmissions.submit(bug, connection: connection, client: client, store: store,
                                                             policy: RetryPolicy(initialDelay: 3600), source: "session")
        guard case .queued(let item, let reason) = outcome else { return XCTFail("expected the rate limit to queue the bug") }
        texts += [reason.description, String(describing: reason), item.lastError ?? "", String(describing: item)]
        do {
            _ = try await client.vote(feedbackID: id)
            XCTFail("expected a rate limit")
        } catch {
            texts += [String(describing: error), "\(error)", LuaErrorInfoText.of(error)]
        }
        let queued = try await store.items(site: nil, states: [.pending, .failed], limit: 10)
        texts += queued.map { "\($0)" + ($0.lastError ?? "") + $0.site }
        let laterDiagnostics = await DiagnosticsSummary.collect(version: "1.0", config: config, store: store, secrets: [key])
        XCTAssertTrue(laterDiagnostics.text.contains("outbox: 1 pending, 0 failed"), laterDiagnostics.text)
        XCTAssertTrue(laterDiagnostics.text.contains("rate limit exceeded"), laterDiagnostics.text)
        texts.append(laterDiagnostics.text)

        XCTAssertGreaterThanOrEqual(handler.count, 4, "requests were logged")
        texts.append(handler.text)
        for text in texts { XCTAssertFalse(text.contains(key), "the key appears in: \(text)") }
        XCTAssertEqual(DiagnosticsSummary.redact("x \(key) y https://a:b@h/p", secrets: [key]), "x <redacted> y https://<redacted>@h/p")
    }
}

/// The text a script would see for an error.
enum LuaErrorInfoText {
    static func of(_ error: any Error) -> String { LuaErrorInfo.northlight(error).description }
}
