import Foundation
import LookoutSim
import SignalKKit
import XCTest

/// A scripted transport: answers requests from a handler and records them.
final class SignalKFakeTransport: SignalKHTTPTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var _requests: [SignalKHTTPRequest] = []
    private let handler: @Sendable (SignalKHTTPRequest, Int) -> SignalKHTTPResponse
    init(_ handler: @escaping @Sendable (SignalKHTTPRequest, Int) -> SignalKHTTPResponse) { self.handler = handler }
    var requests: [SignalKHTTPRequest] { lock.withLock { _requests } }
    func send(_ request: SignalKHTTPRequest, timeout: Duration) async throws -> SignalKHTTPResponse {
        let n = lock.withLock { _requests.append(request); return _requests.count - 1 }
        return handler(request, n)
    }
}

/// Records requested sleeps and returns at once.
final class SignalKFakeSleep: @unchecked Sendable {
    private let lock = NSLock()
    private var _slept: [Duration] = []
    var slept: [Duration] { lock.withLock { _slept } }
    var sleep: SignalKSleep { { d in self.lock.withLock { self._slept.append(d) } } }
}

func skResponse(_ status: Int, _ json: String) -> SignalKHTTPResponse {
    SignalKHTTPResponse(status: status, headers: [SignalKHTTPHeader("Content-Type", "application/json")], body: Data(json.utf8))
}

func skTempDir() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("sk-tokens-\(UUID().uuidString)/tokens")
}

/// A JWT-shaped token with payload `{"device":"x","exp":<exp>}` (signature not checked).
func skJWT(exp: Int?) -> String {
    func b64(_ s: String) -> String {
        Data(s.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }
    let payload = exp.map { #"{"device":"x","exp":\#($0)}"# } ?? #"{"device":"x"}"#
    return b64(#"{"alg":"HS256","typ":"JWT"}"#) + "." + b64(payload) + ".sig"
}

final class SignalKRESTTests: XCTestCase {
    // MARK: against the simulator

    func testDiscoverAndGetPathsFromSimulator() async throws {
        let r = try await SignalKNetSim.shared.get()
        let ep = try await SignalKREST.discover(server: r.base)
        XCTAssertEqual(ep.serverId, "signalk-server-node")
        XCTAssertEqual(ep.ws?.path, "/signalk/v1/stream")
        let rest = SignalKREST(server: r.base, apiBase: ep.http)

        let selfValue = try await rest.get("self")
        XCTAssertEqual(selfValue.stringValue, r.sim.selfContext)
        let sog = try await rest.get("navigation.speedOverGround")
        XCTAssertNotNil(sog["value"]?.doubleValue)
        XCTAssertNotNil(sog["timestamp"]?.stringValue)
        let abs = try await rest.get("vessels/self/navigation/speedOverGround/value")
        XCTAssertNotNil(abs.doubleValue)
        let viaContext = try await rest.get(path: "navigation.speedOverGround", context: r.sim.selfContext)
        XCTAssertNotNil(viaContext["value"])
        let full = try await rest.get("")
        XCTAssertEqual(full["self"]?.stringValue, r.sim.selfContext)

        do {
            _ = try await rest.get("navigation.noSuchThing")
            XCTFail("expected 404")
        } catch let e as SignalKClientError {
            guard case .http(404, "GET", _, _) = e else { return XCTFail("\(e)") }
        }
    }

    /// The simulator has no PUT handlers: as on signalk-server, a PUT gets the 405 reply and
    /// surfaces as "not controllable".
    func testPutAgainstSimulatorWithoutHandlers() async throws {
        let r = try await SignalKNetSim.shared.get()
        let rest = SignalKREST(server: r.base)
        do {
            try await rest.put("electrical.switches.anchorLight.state", value: 1)
            XCTFail("expected an error")
        } catch let e as SignalKClientError {
            XCTAssertEqual(
                e, .requestFailed(state: "COMPLETED", statusCode: 405, message: "PUT not supported for electrical.switches.anchorLight.state"))
        }
    }

    func testAPIPaths() {
        XCTAssertEqual(SignalKREST.apiPath(for: "navigation.speedOverGround"), "vessels/self/navigation/speedOverGround")
        XCTAssertEqual(SignalKREST.apiPath(for: "vessels.urn:mrn:imo:mmsi:1.navigation.log"), "vessels/urn:mrn:imo:mmsi:1/navigation/log")
        XCTAssertEqual(SignalKREST.apiPath(for: "/sources"), "sources")
        XCTAssertEqual(SignalKREST.apiPath(for: "self"), "self")
        XCTAssertEqual(SignalKREST.apiPath(for: ""), "")
    }

    // MARK: PUT format and polling (scripted transport)

    func testPutSyncCompletedWithBearerToken() async throws {
        let t = SignalKFakeTransport { _, _ in
            skResponse(200, #"{"state":"COMPLETED","requestId":"r1","statusCode":200,"href":"/signalk/v1/requests/r1"}"#)
        }
        let rest = SignalKREST(server: URL(string: "http://boat:3000")!, transport: t, tokenProvider: { "TOKEN123" })
        let res = try await rest.put("electrical.switches.anchorLight.state", value: 1, source: "venus.1")
        XCTAssertEqual(res.state, "COMPLETED")
        XCTAssertEqual(res.statusCode, 200)
        let req = try XCTUnwrap(t.requests.first)
        XCTAssertEqual(req.method, "PUT")
        XCTAssertEqual(req.url.absoluteString, "http://boat:3000/signalk/v1/api/vessels/self/electrical/switches/anchorLight/state")
        XCTAssertEqual(req.header("Authorization"), "Bearer TOKEN123")
        XCTAssertEqual(req.header("Content-Type"), "application/json")
        XCTAssertNil(req.header("Cookie"))
        let body = try SignalKJSON.parse(XCTUnwrap(req.body))
        XCTAssertEqual(body, ["value": 1, "source": "venus.1"])
    }

    func testPutPendingIsPolledUntilCompleted() async throws {
        let t = SignalKFakeTransport { req, n in
            if req.method == "PUT" {
                return skResponse(202, #"{"state":"PENDING","requestId":"r2","statusCode":202,"href":"/signalk/v1/requests/r2"}"#)
            }
            return n < 3
                ? skResponse(200, #"{"state":"PENDING","requestId":"r2","statusCode":202,"href":"/signalk/v1/requests/r2"}"#)
                : skResponse(200, #"{"state":"COMPLETED","requestId":"r2","statusCode":200}"#)
        }
        let s = SignalKFakeSleep()
        let rest = SignalKREST(server: URL(string: "http://boat:3000")!, transport: t, sleep: s.sleep)
        let res = try await rest.put("steering.autopilot.target.headingMagnetic", value: 1.5,
                                     pollInterval: .milliseconds(100))
        XCTAssertEqual(res.statusCode, 200)
        XCTAssertEqual(t.requests.count, 4)
        XCTAssertEqual(t.requests[1].url.absoluteString, "http://boat:3000/signalk/v1/requests/r2")
        XCTAssertEqual(s.slept, [.seconds(1), .seconds(1), .seconds(1)], "polling never faster than 1 s")
    }

    func testPutFailureAndTimeout() async throws {
        let t405 = SignalKFakeTransport { _, _ in
            skResponse(405, #"{"state":"COMPLETED","requestId":"r3","statusCode":405,"message":"PUT not supported for x"}"#)
        }
        do {
            try await SignalKREST(server: URL(string: "http://boat:3000")!, transport: t405).put("a.b", value: 1)
            XCTFail("expected failure")
        } catch let e as SignalKClientError {
            XCTAssertEqual(e, .requestFailed(state: "COMPLETED", statusCode: 405, message: "PUT not supported for x"))
        }
        let tPending = SignalKFakeTransport { _, _ in
            skResponse(202, #"{"state":"PENDING","requestId":"r4","statusCode":202,"href":"/signalk/v1/requests/r4"}"#)
        }
        let s = SignalKFakeSleep()
        do {
            try await SignalKREST(server: URL(string: "http://boat:3000")!, transport: tPending, sleep: s.sleep)
                .put("a.b", value: 1, timeout: .seconds(3))
            XCTFail("expected timeout")
        } catch let e as SignalKClientError {
            guard case .timeout = e else { return XCTFail("\(e)") }
        }
        XCTAssertEqual(s.slept.count, 3)
        let t401 = SignalKFakeTransport { _, _ in skResponse(401, #"{"error":"Permission Denied"}"#) }
        do {
            try await SignalKREST(server: URL(string: "http://boat:3000")!, transport: t401, tokenProvider: { "SECRET" })
                .put("a.b", value: 1)
            XCTFail("expected 401")
        } catch let e as SignalKClientError {
            XCTAssertEqual(e, .unauthorized(status: 401, message: "Permission Denied"))
            XCTAssertFalse(e.description.contains("SECRET"))
        }
    }

    // MARK: tokens and access requests (the simulator has no security)

    func testAccessRequestAgainstSimulatorIsUnavailable() async throws {
        let r = try await SignalKNetSim.shared.get()
        let store = SignalKTokenStore(directory: skTempDir(), host: SignalKTokenStore.hostKey(for: r.base))
        let access = SignalKAccess(server: r.base, tokenStore: store)
        do {
            try await access.requestAccess(description: "Lookout test")
            XCTFail("expected unavailable")
        } catch let e as SignalKClientError {
            XCTAssertEqual(e, .accessRequestsUnavailable(status: 404))
        }
    }

    func testAccessRequestApprovedStoresTokenIn0600File() async throws {
        let dir = skTempDir()
        let token = skJWT(exp: 4_102_444_800)  // 2100-01-01
        let t = SignalKFakeTransport { req, n in
            if req.method == "POST" {
                return skResponse(202, #"{"state":"PENDING","requestId":"q1","statusCode":202,"href":"/signalk/v1/requests/q1"}"#)
            }
            if n < 3 { return skResponse(200, #"{"state":"PENDING","requestId":"q1","statusCode":202,"href":"/signalk/v1/requests/q1"}"#) }
            return skResponse(200, #"{"state":"COMPLETED","requestId":"q1","statusCode":200,"accessRequest":{"permission":"APPROVED","token":"\#(token)"}}"#)
        }
        let s = SignalKFakeSleep()
        let store = SignalKTokenStore(directory: dir, host: "boat.local:3000")
        let states = SignalKStateLog()
        let access = SignalKAccess(server: URL(string: "http://boat.local:3000")!, tokenStore: store, transport: t, sleep: s.sleep)
        let got = try await access.requestAccess(description: "Helm – Lookout", permissions: .readwrite,
                                                 pollInterval: .milliseconds(10)) { states.add($0) }
        XCTAssertEqual(got, token)
        XCTAssertEqual(s.slept, [.seconds(1), .seconds(1), .seconds(1)], "never faster than once a second")
        XCTAssertEqual(states.all.first, .pending(href: "/signalk/v1/requests/q1"))
        XCTAssertEqual(states.all.last, .approved)

        // Request format.
        let post = t.requests[0]
        XCTAssertEqual(post.url.absoluteString, "http://boat.local:3000/signalk/v1/access/requests")
        let body = try SignalKJSON.parse(XCTUnwrap(post.body))
        let clientId = try await store.clientId()
        XCTAssertEqual(body, ["clientId": .string(clientId), "description": "Helm – Lookout", "permissions": "readwrite"])
        XCTAssertNotNil(UUID(uuidString: clientId))

        // File: mode 0600, named after the host, clientId persistent across store instances.
        XCTAssertEqual(store.fileURL.lastPathComponent, "signalk-boat.local_3000.json")
        let attrs = try FileManager.default.attributesOfItem(atPath: store.fileURL.path)
        XCTAssertEqual((attrs[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let again = SignalKTokenStore(directory: dir, host: "boat.local:3000")
        let id2 = try await again.clientId()
        let tok2 = await again.token()
        XCTAssertEqual(id2, clientId)
        XCTAssertEqual(tok2, token)
        let rec = try await again.load()
        XCTAssertEqual(rec.expires, Date(timeIntervalSince1970: 4_102_444_800))
        XCTAssertFalse(rec.description.contains(token))

        // The token is then used by REST as a Bearer header.
        let t2 = SignalKFakeTransport { _, _ in skResponse(200, #""vessels.urn:x""#) }
        _ = try await SignalKREST(server: URL(string: "http://boat.local:3000")!, transport: t2, tokenStore: again).get("self")
        XCTAssertEqual(t2.requests.first?.header("Authorization"), "Bearer " + token)
    }

    func testAccessRequestDeniedAndExpiredToken() async throws {
        let dir = skTempDir()
        let t = SignalKFakeTransport { req, _ in
            if req.method == "POST" {
                return skResponse(202, #"{"state":"PENDING","requestId":"q2","statusCode":202,"href":"/signalk/v1/requests/q2"}"#)
            }
            return skResponse(200, #"{"state":"COMPLETED","requestId":"q2","statusCode":200,"accessRequest":{"permission":"DENIED"}}"#)
        }
        let store = SignalKTokenStore(directory: dir, host: "b:1")
        let access = SignalKAccess(server: URL(string: "http://b:1")!, tokenStore: store, transport: t, sleep: SignalKFakeSleep().sleep)
        do {
            try await access.requestAccess(description: "x")
            XCTFail("expected denial")
        } catch let e as SignalKClientError { XCTAssertEqual(e, .accessDenied) }
        // DENIED is remembered: no new request is sent.
        let before = t.requests.count
        do { _ = try await access.submit(description: "x"); XCTFail() } catch let e as SignalKClientError {
            XCTAssertEqual(e, .accessDenied)
        }
        XCTAssertEqual(t.requests.count, before)

        // An expired JWT is not handed out.
        let s2 = SignalKTokenStore(directory: dir, host: "c:1")
        try await s2.setToken(skJWT(exp: 1_000))
        let expired = await s2.token()
        XCTAssertNil(expired)
        try await s2.setToken(skJWT(exp: nil))
        let never = await s2.token()
        XCTAssertNotNil(never)
    }

    func testLoginRequestFormatAndFailure() async throws {
        let t = SignalKFakeTransport { req, _ in
            let body = (try? SignalKJSON.parse(req.body ?? Data())) ?? .null
            if body["password"]?.stringValue == "good" {
                return skResponse(200, #"{"timeToLive":null,"token":"eyJhbGciOiJIUzI1NiJ9.eyJpZCI6ImFsaWNlIn0.s"}"#)
            }
            return skResponse(401, #"{"statusCode":401,"message":"Invalid username/password"}"#)
        }
        let store = SignalKTokenStore(directory: skTempDir(), host: "d:1")
        let access = SignalKAccess(server: URL(string: "http://d:1")!, tokenStore: store, transport: t)
        let ok = try await access.login(username: "alice", password: "good")
        XCTAssertNil(ok.timeToLive)
        XCTAssertFalse(ok.description.contains("eyJ"))
        let req = t.requests[0]
        XCTAssertEqual(req.method, "POST")
        XCTAssertEqual(req.url.path, "/signalk/v1/auth/login")
        XCTAssertEqual(req.header("Content-Type"), "application/json")
        XCTAssertEqual(try SignalKJSON.parse(XCTUnwrap(req.body)), ["username": "alice", "password": "good", "rememberMe": false])
        let stored = await store.token()
        XCTAssertEqual(stored, ok.token)
        do {
            try await access.login(username: "alice", password: "bad")
            XCTFail("expected 401")
        } catch let e as SignalKClientError {
            XCTAssertEqual(e, .unauthorized(status: 401, message: "Invalid username/password"))
        }
        try await access.logout()
        let gone = await store.token()
        XCTAssertNil(gone)
    }

    func testErrorDescriptionsRedactTokens() async throws {
        let t = SignalKFakeTransport { _, _ in skResponse(400, #"{"message":"bad token eyJhbGciOi.payload.sig"}"#) }
        do {
            _ = try await SignalKREST(server: URL(string: "http://e:1")!, transport: t, tokenProvider: { "eyJSECRET" }).get("self")
            XCTFail("expected 400")
        } catch let e as SignalKClientError {
            XCTAssertFalse(e.description.contains("eyJ"), e.description)
            XCTAssertTrue(e.description.contains("HTTP 400"))
        }
    }
}

/// Collects access states (from a synchronous callback).
final class SignalKStateLog: @unchecked Sendable {
    private let lock = NSLock()
    private var states: [SignalKAccessState] = []
    func add(_ s: SignalKAccessState) { lock.withLock { states.append(s) } }
    var all: [SignalKAccessState] { lock.withLock { states } }
}
