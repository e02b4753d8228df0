import Foundation

import LookoutSim
import Logging
import XCTest

@testable import GarminKit

/// Collects every log line in memory.
final class MemoryLog: @unchecked Sendable {
    // @unchecked Sendable: `lines` is only touched under `lock`.
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ s: String) { lock.withLock { lines.append(s) } }
    var all: [String] { lock.withLock { lines } }

    /// A logger at trace level writing here.
    func logger() -> Logger {
        var l = Logger(label: "garmin-scan") { _ in MemoryLogHandler(sink: self) }
        l.logLevel = .trace
        return l
    }
}

struct MemoryLogHandler: LogHandler {
    let sink: MemoryLog
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        sink.add("\(event.level) \(event.message) \(metadata.merging(event.metadata ?? [:]) { $1 })")
    }
}

/// A full session (MFA login, refresh, calls, errors, logout) with trace logging: no password,
/// MFA code, token, ticket or consumer secret appears in logs, error descriptions or status.
final class GarminSecretScanTests: XCTestCase {
    func testNoSecretInLogsOrErrors() async throws {
        let mfaCode = "918273"
        let (sim, url) = try await GarminSims.shared.sim(
            "scan", .init(consumerSecret: "sim-consumer-secret-XYZZY", mfaCode: mfaCode, accessTokenLifetime: 3600))
        let log = MemoryLog()
        let clock = TestClock()
        let dir = GarminTest.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        var texts: [String] = []
        for flow in [GarminSSOFlow.mobile, .widget] {
            let c = try GarminClient(
                configuration: .local(url, tokenDirectory: dir, ssoFlow: flow), logger: log.logger(), now: { clock.now() })
            do { _ = try await c.login(email: GarminTest.mfaEmail, password: "wrong-password-QWERTY") } catch { texts.append("\(error)") }
            if case .needsMFA(let state) = try await c.login(email: GarminTest.mfaEmail, password: GarminTest.password) {
                do { try await c.resumeLogin(state, code: "000111") } catch { texts.append("\(error)") }
            }
            _ = try await c.login(email: GarminTest.mfaEmail, password: GarminTest.password) { mfaCode }
            texts.append("\(await c.tokens.oauth1!)")
            texts.append("\(await c.tokens.oauth2!)")
            clock.advance(4000)
            _ = try await c.profile()
            try await c.refresh()
            _ = try await c.heartRate(date: GarminTest.today())
            await sim.injectFault(status: 429, pathPrefix: "/userprofile-service", count: 1, retryAfter: 5)
            do { _ = try await c.profile() } catch { texts.append("\(error)") }
            do { _ = try await c.get("/activity-service/activity/1") } catch { texts.append("\(error)") }
            texts.append("\(await c.status())")
            try await c.logout()
            do { _ = try await c.profile() } catch { texts.append("\(error)") }
        }
        let haystack = (log.all + texts).joined(separator: "\n")
        XCTAssertGreaterThan(log.all.count, 5, "the session logged")
        var secrets = await sim.issuedSecrets()
        XCTAssertGreaterThan(secrets.count, 10)
        secrets += [GarminTest.password, "wrong-password-QWERTY", mfaCode, "000111", "sim-consumer-secret-XYZZY"]
        for s in secrets { XCTAssertFalse(haystack.contains(s), "secret leaked: \(s.prefix(4))…") }
        XCTAssertTrue(haystack.contains("rate limited"))
        XCTAssertTrue(haystack.contains("MFA code was rejected"))
    }

    func testRedactionOfHostileBodies() {
        let e = GarminHTTPCheck.error(
            GarminHTTPResponse(
                status: 500,
                body: Data(#"{"access_token": "AAA", "x": "oauth_token_secret=BBB&k=1", "t": "ST-123-abc-sso", "h": "Bearer CCC"}"#.utf8)),
            url: URL(string: "https://connectapi.garmin.com/p?ticket=DDD")!)
        let text = "\(e)"
        for s in ["AAA", "BBB", "ST-123", "CCC", "DDD"] { XCTAssertFalse(text.contains(s), text) }
        XCTAssertTrue(text.contains("https://connectapi.garmin.com/p"))
    }
}
