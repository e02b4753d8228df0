import Foundation
import HTTPTypes
import Hummingbird
import Logging
import LookoutTestSupport
import LookoutWire
import NightscoutKit
import XCTest

@testable import LookoutConfig
@testable import LookoutStore
@testable import LookoutAutomation

/// Issue 24 §6: a server's `Retry-After` far in the future (a hostile or broken server) parks a
/// queued item no longer than the retry policy's maximum, in every queue that honours it.
final class HostileRetryAfterTests: XCTestCase {
    /// A server on 127.0.0.1 answering every request under `/date` with 503 and
    /// `Retry-After: Wed, 21 Oct 2099 07:28:00 GMT`, and under `/seconds` with 503 and
    /// `Retry-After: 3000000000` (95 years).
    private func hostileServer() async throws -> HTTPTestServer {
        let router = Router()
        for method in [HTTPRequest.Method.get, .post, .put] {
            router.on("/date/**", method: method) { _, _ -> Response in
                Response(status: .serviceUnavailable, headers: [.retryAfter: "Wed, 21 Oct 2099 07:28:00 GMT"])
            }
            router.on("/seconds/**", method: method) { _, _ -> Response in
                Response(status: .serviceUnavailable, headers: [.retryAfter: "3000000000"])
            }
        }
        return try await HTTPTestServer.start(router: router)
    }

    /// A Nightscout upload queued in the outbox, answered 503 with a `Retry-After` in 2099: still
    /// pending, next attempt within the policy's maximum (10 min), not in 2099.
    func testOutboxCapsAFarRetryAfterAtThePolicysMaximum() async throws {
        let server = try await hostileServer()
        defer { Task { await server.stop() } }
        let configuration = try NightscoutConfiguration(
            siteURL: URL(string: "http://127.0.0.1:\(server.port)/date")!, credentials: .apiSecret("hostile-test-secret-1"),
            preferredAPI: .v1, allowsV1Fallback: true)
        let client = NightscoutClient(configuration: configuration, timeout: 5)
        let policy = RetryPolicy()
        let outbox = Outbox(client: client, store: try StateStore(), policy: policy)
        let body = Data(#"{"identifier":"far-1","eventType":"Note","created_at":"2026-01-01T00:00:00Z"}"#.utf8)
        _ = try await outbox.enqueue(.treatments, identifier: "far-1", body: body, source: "test")
        let before = Date()
        let attempted = await outbox.attempt("far-1")
        let item = try XCTUnwrap(attempted)
        XCTAssertEqual(item.state, .pending, "\(item.lastError ?? "")")
        XCTAssertEqual(item.lastStatus, 503)
        XCTAssertLessThanOrEqual(item.nextAttempt.timeIntervalSince(before), policy.maximumDelay + 5,
                                 "next attempt \(item.nextAttempt), not within \(policy.maximumDelay) s")
    }

    /// A notification to a webhook answered 503 with `Retry-After: 3000000000`: pending, next
    /// attempt within the notify queue's maximum (5 min).
    func testNotifyQueueCapsAFarRetryAfterAtThePolicysMaximum() async throws {
        let server = try await hostileServer()
        defer { Task { await server.stop() } }
        let store = try StateStore()
        let config = try HostConfig(text: """
            [notify.hook]
            type = "webhook"
            url = "http://127.0.0.1:\(server.port)/seconds/hook"
            """)
        let sender = NotifySender(config: config, environment: [:], logger: Logger(label: "test"), openStore: { store })
        let outbox = NotifyOutbox(store: store, sender: sender)
        let message = NotifyMessage(id: "far", channel: "hook", title: "t", message: "far", severity: "info", kind: "message", time: 0)
        _ = try await outbox.enqueue(message)
        let before = Date()
        let attempted = await outbox.attempt("far")
        let item = try XCTUnwrap(attempted)
        XCTAssertEqual(item.state, .pending, "\(item.lastError ?? "")")
        XCTAssertEqual(item.lastStatus, 503)
        XCTAssertLessThanOrEqual(item.nextAttempt.timeIntervalSince(before), outbox.policy.maximumDelay + 5,
                                 "next attempt \(item.nextAttempt), not within \(outbox.policy.maximumDelay) s")
    }

    /// The policy itself: a `Retry-After` within the maximum is honoured, a longer one is cut to it.
    func testRetryPolicyHonoursRetryAfterUpToItsMaximum() {
        let policy = RetryPolicy(initialDelay: 2, maximumDelay: 60, multiplier: 2, jitter: 0)
        XCTAssertEqual(policy.delay(afterAttempts: 1, retryAfter: 30, random: 0.5), 30)
        XCTAssertEqual(policy.delay(afterAttempts: 1, retryAfter: 2e9, random: 0.5), 60)
        XCTAssertEqual(policy.delay(afterAttempts: 1, retryAfter: .infinity, random: 0.5), 60)
        XCTAssertEqual(policy.delay(afterAttempts: 1, retryAfter: -5, random: 0.5), 2)
    }
}
