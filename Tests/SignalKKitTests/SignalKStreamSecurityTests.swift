import Foundation
import LookoutSim
import LookoutTestSupport
import LookoutWire
import SignalKKit
import XCTest

/// The WebSocket side of security (§3.2, §8) against the simulator with security on: a bad token
/// fails the upgrade, no token gets the hello and nothing else, and only `readwrite`/`admin`
/// sockets may publish deltas.
final class SignalKStreamSecurityTests: XCTestCase {
    private func stream(_ base: URL, token: String?) async throws -> (SignalKStream, SignalKEventLog) {
        var config = try SignalKStreamConfiguration(url: base)
        config.subscribe = .ownVessel
        config.initialBackoff = .milliseconds(50)
        config.maxBackoff = .milliseconds(200)
        let provider: (@Sendable () async -> String?)? = token.map { t in { @Sendable in t } }
        let stream = SignalKStream(configuration: config, tokenProvider: provider)
        let log = SignalKEventLog()
        await log.attach(stream)
        await stream.start()
        return (stream, log)
    }

    private func adminToken(_ r: SignalKSecureSim.Running) async throws -> String {
        let store = SignalKTokenStore(directory: skTempDir(), host: SignalKTokenStore.hostKey(for: r.base))
        try await SignalKAccess(server: r.base, tokenStore: store).login(username: "admin", password: "secret")
        let token = await store.token()
        return try XCTUnwrap(token)
    }

    private func deviceToken(_ r: SignalKSecureSim.Running, permissions: SignalKPermission) async throws -> String {
        let store = SignalKTokenStore(directory: skTempDir(), host: SignalKTokenStore.hostKey(for: r.base))
        let clientId = try await store.clientId()
        let sim = r.sim
        return try await SignalKAccess(server: r.base, tokenStore: store, sleep: { _ in
            await sim.approveAccessRequest(clientId: clientId, permissions: permissions.rawValue)
        }).requestAccess(description: "stream security test", permissions: permissions)
    }

    /// Publishes `path` on `stream`, then ends the socket with an unsubscribe the server refuses
    /// (it answers and closes), so the server has handled the delta once the socket is gone.
    private func publishThenEndSocket(_ stream: SignalKStream, log: SignalKEventLog, path: String) async throws {
        let sent = await stream.publish(SignalKDelta(updates: [SignalKUpdate(timestamp: Date(), values: [SignalKPathValue(path: path, value: 1)])]))
        XCTAssertTrue(sent)
        let refused = await stream.send(#"{"context":"vessels.self","unsubscribe":[{"path":"x"}]}"#)
        XCTAssertTrue(refused)
        try await waitUntil("the refused unsubscribe ends the socket") {
            await log.states.contains { if case .waitingToReconnect = $0 { return true } else { return false } }
        }
    }

    private static func exists(_ rest: SignalKREST, _ path: String) async throws -> Bool {
        do {
            _ = try await rest.get(path)
            return true
        } catch SignalKClientError.http(404, _, _, _) { return false }
    }

    func testBadTokenFailsTheUpgrade() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let (stream, log) = try await stream(r.base, token: skJWT(exp: nil))
        defer { Task { await stream.close() } }
        try await waitUntil("a failed attempt") {
            await log.states.contains { if case .waitingToReconnect = $0 { return true } else { return false } }
        }
        let hellos = await stream.helloCount
        XCTAssertEqual(hellos, 0)
        // The same token on REST says why.
        do {
            _ = try await SignalKREST(server: r.base, tokenProvider: { skJWT(exp: nil) }).get("self")
            XCTFail("expected 401")
        } catch SignalKClientError.unauthorized(401, "bad auth token") {}
    }

    /// signalk-server answers a bad token at the upgrade with 401 and Primus's JSON error (§3.2),
    /// not Hummingbird's 400; a good token still upgrades (101).
    func testBadTokenUpgradeIsHTTP401() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let port = try XCTUnwrap(r.base.port)
        let upgrade = ["Host: 127.0.0.1:\(port)", "Upgrade: websocket", "Connection: Upgrade",
                       "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]
        for target in ["/signalk/v1/stream?subscribe=none&token=\(skJWT(exp: nil))", "/signalk/v1/stream?subscribe=none"] {
            let headers = target.contains("token=") ? upgrade : upgrade + ["Authorization: Bearer " + skJWT(exp: nil)]
            let answer = try RawHTTP.send(port: port, method: "GET", target: target, headers: headers)
            XCTAssertEqual(answer.status, 401, target)
            XCTAssertEqual(answer.headers["content-type"], "application/json")
            XCTAssertEqual(try JSONValue.parse(Data(answer.body.utf8))["error"]?.stringValue, "bad auth token")
        }
        let good = try await adminToken(r)
        let answer = try RawHTTP.send(port: port, method: "GET", target: "/signalk/v1/stream?subscribe=none",
                                      headers: upgrade + ["Authorization: Bearer " + good], timeout: 2)
        XCTAssertEqual(answer.status, 101)
    }

    /// The client reports the refused token as `unauthorized` (401), not as a generic failure.
    func testBadTokenIsReportedAsUnauthorized() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let (stream, log) = try await stream(r.base, token: skJWT(exp: nil))
        defer { Task { await stream.close() } }
        try await waitUntil("the refusal is reported") { await !log.refusals.isEmpty }
        let refusals = await log.refusals
        XCTAssertEqual(refusals.first, .unauthorized(status: 401, message: "bad auth token"))
        let kept = await stream.authFailure
        XCTAssertEqual(kept, .unauthorized(status: 401, message: "bad auth token"))
    }

    func testNoTokenGetsHelloOnlyAndCannotPublish() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let (stream, log) = try await stream(r.base, token: nil)
        defer { Task { await stream.close() } }
        try await waitUntil("hello") { await stream.helloCount >= 1 }
        await r.sim.publish(["updates": [["values": [["path": "environment.wssec.fromServer", "value": 1]]]]])
        try await publishThenEndSocket(stream, log: log, path: "environment.wssec.anonymous")
        let deltas = await log.deltas
        XCTAssertEqual(deltas.count, 0, "an anonymous socket must see no data")
        let admin = SignalKREST(server: r.base, tokenProvider: { [t = try await adminToken(r)] in t })
        let fromServer = try await Self.exists(admin, "environment.wssec.fromServer")
        let anonymous = try await Self.exists(admin, "environment.wssec.anonymous")
        XCTAssertTrue(fromServer)
        XCTAssertFalse(anonymous)
    }

    func testReadonlyTokenReadsButCannotPublishReadwriteCan() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let admin = SignalKREST(server: r.base, tokenProvider: { [t = try await adminToken(r)] in t })

        let readonly = try await deviceToken(r, permissions: .readonly)
        let (ro, roLog) = try await stream(r.base, token: readonly)
        defer { Task { await ro.close() } }
        try await waitUntil("hello") { await ro.helloCount >= 1 }
        try await waitUntil("cached values on a readonly socket") { await !roLog.deltas.isEmpty }
        try await publishThenEndSocket(ro, log: roLog, path: "environment.wssec.readonly")
        let fromReadonly = try await Self.exists(admin, "environment.wssec.readonly")
        XCTAssertFalse(fromReadonly)

        let readwrite = try await deviceToken(r, permissions: .readwrite)
        let (rw, _) = try await stream(r.base, token: readwrite)
        defer { Task { await rw.close() } }
        try await waitUntil("hello") { await rw.helloCount >= 1 }
        let sent = await rw.publish(SignalKDelta(updates: [SignalKUpdate(values: [SignalKPathValue(path: "environment.wssec.readwrite", value: 2)])]))
        XCTAssertTrue(sent)
        try await waitUntil("the readwrite delta is stored") { (try? await Self.exists(admin, "environment.wssec.readwrite")) == true }
        let v = try await admin.get("environment.wssec.readwrite")
        XCTAssertEqual(v["value"]?.intValue, 2)
    }
}
