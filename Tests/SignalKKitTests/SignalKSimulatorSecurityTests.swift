import Foundation
import LookoutSim
import SignalKKit
import XCTest

/// One simulator with security on, users and PUT handlers for the whole process (the simulator is
/// never stopped; see `SignalKSimulator.stop()`).
actor SignalKSecureSim {
    static let shared = SignalKSecureSim()
    struct Running: Sendable {
        let sim: SignalKSimulator
        let clock: SimulatedClock
        let base: URL
    }
    private var running: Running?

    func get() async throws -> Running {
        if let running { return running }
        let clock = SimulatedClock(Date(timeIntervalSince1970: 1_714_557_600))
        let handlers: [String: SignalKPutHandler] = [
            "electrical.switches.anchorLight.state": { _ in .completed() },
            "electrical.switches.deck.state": { _ in .pending },
            "electrical.switches.bilge.state": { _ in .completed(statusCode: 502, message: "device failed") },
        ]
        let sim = try SignalKSimulator(
            options: .init(rate: 10, seed: 3, clock: clock.now, autoTick: false, putHandlers: handlers,
                           security: true, users: ["admin": "secret"]))
        let r = Running(sim: sim, clock: clock, base: try await sim.start())
        running = r
        return r
    }
}

final class SignalKSimulatorSecurityTests: XCTestCase {
    func tokenStore(_ base: URL) -> SignalKTokenStore {
        SignalKTokenStore(directory: skTempDir(), host: SignalKTokenStore.hostKey(for: base))
    }

    func adminREST(_ r: SignalKSecureSim.Running, sleep: SignalKSleep? = nil) async throws -> SignalKREST {
        let store = tokenStore(r.base)
        try await SignalKAccess(server: r.base, tokenStore: store).login(username: "admin", password: "secret")
        return SignalKREST(server: r.base, tokenStore: store, sleep: sleep)
    }

    func raw(_ method: String, _ url: URL, _ body: String?, headers: [SignalKHTTPHeader] = []) async throws -> SignalKHTTPResponse {
        let req = SignalKHTTPRequest(method: method, url: url, headers: [SignalKHTTPHeader("Content-Type", "application/json")] + headers,
                                body: body.map { Data($0.utf8) })
        return try await SignalKAsyncHTTPTransport().send(req, timeout: .seconds(10))
    }

    func expectUnauthorized(_ message: String, _ body: () async throws -> Void, line: UInt = #line) async {
        do {
            try await body()
            XCTFail("expected 401", line: line)
        } catch let e as SignalKClientError {
            guard case .unauthorized(401, let m) = e else { return XCTFail("\(e)", line: line) }
            XCTAssertEqual(m, message, line: line)
        } catch { XCTFail("\(error)", line: line) }
    }

    func expectFailed(_ code: Int, _ message: String?, _ body: () async throws -> Void, line: UInt = #line) async {
        do {
            try await body()
            XCTFail("expected a failed request", line: line)
        } catch let e as SignalKClientError {
            guard case .requestFailed("COMPLETED", code, let m) = e else { return XCTFail("\(e)", line: line) }
            XCTAssertEqual(m, message, line: line)
        } catch { XCTFail("\(error)", line: line) }
    }

    // MARK: security on: REST needs a token

    func testRESTWithoutOrWithBadTokenIs401() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let ep = try await SignalKREST.discover(server: r.base)  // discovery ignores auth
        XCTAssertEqual(ep.serverId, "signalk-server-node")
        await expectUnauthorized("Unauthorized") { _ = try await SignalKREST(server: r.base).get("self") }
        await expectUnauthorized("bad auth token") {
            _ = try await SignalKREST(server: r.base, tokenProvider: { skJWT(exp: nil) }).get("self")
        }
        await expectUnauthorized("Unauthorized") {
            try await SignalKREST(server: r.base).put("electrical.switches.anchorLight.state", value: 1)
        }
    }

    func testLoginIssuesTokenAcceptedForREST() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let store = tokenStore(r.base)
        let access = SignalKAccess(server: r.base, tokenStore: store)
        await expectUnauthorized("Invalid username/password") {
            try await access.login(username: "admin", password: "wrong")
        }
        let login = try await access.login(username: "admin", password: "secret")
        XCTAssertNil(login.timeToLive)
        XCTAssertEqual(login.token.split(separator: ".").count, 3)
        XCTAssertNil(SignalKTokenStore.jwtExpiry(login.token))
        let stored = await store.token()
        XCTAssertEqual(stored, login.token)
        let rest = SignalKREST(server: r.base, tokenStore: store)
        let selfValue = try await rest.get("self")
        XCTAssertEqual(selfValue.stringValue, r.sim.selfContext)
        let sog = try await rest.get("navigation.speedOverGround")
        XCTAssertNotNil(sog["value"]?.doubleValue)
        // JWT also accepted under the `JWT` scheme and as the JAUTHENTICATION cookie.
        let url = r.base.appendingPathComponent("signalk/v1/api/self")
        let a = try await raw("GET", url, nil, headers: [SignalKHTTPHeader("Authorization", "JWT " + login.token)])
        XCTAssertEqual(a.status, 200)
        let c = try await raw("GET", url, nil, headers: [SignalKHTTPHeader("Cookie", "JAUTHENTICATION=" + login.token)])
        XCTAssertEqual(c.status, 200)
        let q = try await raw("GET", URL(string: url.absoluteString + "?token=" + login.token)!, nil)
        XCTAssertEqual(q.status, 401)  // ?token= is not accepted on REST
    }

    // MARK: PUT

    func testPutSyncCompletedAndUnsupported() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let rest = try await adminREST(r)
        let result = try await rest.put("electrical.switches.anchorLight.state", value: 1)
        XCTAssertEqual(result.state, "COMPLETED")
        XCTAssertEqual(result.statusCode, 200)
        let id = try XCTUnwrap(result.requestId)
        XCTAssertEqual(result.href, "/signalk/v1/requests/\(id)")
        let polled = try await rest.get(url: URL(string: "/signalk/v1/requests/\(id)", relativeTo: r.base)!.absoluteURL)
        XCTAssertEqual(polled["state"]?.stringValue, "COMPLETED")
        XCTAssertEqual(polled["statusCode"]?.intValue, 200)
        XCTAssertEqual(polled["user"]?.stringValue, "admin")

        await expectFailed(405, "PUT not supported for electrical.switches.nothing.state") {
            try await rest.put("electrical.switches.nothing.state", value: 1)
        }
        await expectFailed(405, "PUT not supported for electrical.switches.anchorLight.state") {
            try await rest.put("electrical.switches.anchorLight.state", value: 1, context: r.sim.selfContext)
        }
        // `.` and `/` are the same in the URL path.
        let token = try await SignalKAccess(server: r.base, tokenStore: tokenStore(r.base))
            .login(username: "admin", password: "secret").token
        let auth = [SignalKHTTPHeader("Authorization", "Bearer " + token)]
        let api = "\(r.base.absoluteString)/signalk/v1/api/"
        let dotted = try await raw("PUT", URL(string: api + "vessels/self/electrical/switches/anchorLight.state")!,
                                   #"{"value":0}"#, headers: auth)
        XCTAssertEqual(dotted.status, 200)
        let noValue = try await raw("PUT", URL(string: api + "vessels/self/electrical/switches/anchorLight/state")!,
                                    #"{"source":"x"}"#, headers: auth)
        XCTAssertEqual(noValue.status, 400)
        XCTAssertEqual(String(decoding: noValue.body, as: UTF8.self), "input is missing a value")
        let short = try await raw("PUT", URL(string: api + "vessels/self")!, #"{"value":0}"#, headers: auth)
        XCTAssertEqual(short.status, 400)
        XCTAssertEqual(String(decoding: short.body, as: UTF8.self), "invalid path")
        let unknown = try await raw("GET", URL(string: "\(r.base.absoluteString)/signalk/v1/requests/nope")!, nil)
        XCTAssertEqual(unknown.status, 500)
        XCTAssertEqual(String(decoding: unknown.body, as: UTF8.self), "Unable to check request: not found")
    }

    func testPutPendingThenCompletedByPolling() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let sim = r.sim
        let sleeps = SignalKFakeSleep()
        let rest = try await adminREST(r, sleep: { d in
            try await sleeps.sleep(d)
            for id in await sim.pendingPutRequestIDs() { await sim.completeRequest(id) }
        })
        let result = try await rest.put("electrical.switches.deck.state", value: 1)
        XCTAssertEqual(result.state, "COMPLETED")
        XCTAssertEqual(result.statusCode, 200)
        XCTAssertEqual(sleeps.slept, [.seconds(1)])
        let id = try XCTUnwrap(result.requestId)
        let reply = await sim.requestReply(id)
        XCTAssertEqual(reply?["state"]?.stringValue, "COMPLETED")
        let pending = await sim.pendingPutRequestIDs()
        XCTAssertEqual(pending, [])
    }

    func testPutPendingReplyShape() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let token = try await SignalKAccess(server: r.base, tokenStore: tokenStore(r.base))
            .login(username: "admin", password: "secret").token
        let resp = try await raw(
            "PUT", URL(string: "\(r.base.absoluteString)/signalk/v1/api/vessels/self/electrical/switches/deck/state")!,
            #"{"value":1}"#, headers: [SignalKHTTPHeader("Authorization", "Bearer " + token)])
        XCTAssertEqual(resp.status, 202)
        let j = try SignalKJSON.parse(resp.body)
        let id = try XCTUnwrap(j["requestId"]?.stringValue)
        XCTAssertEqual(j["state"]?.stringValue, "PENDING")
        XCTAssertEqual(j["statusCode"]?.intValue, 202)
        XCTAssertEqual(j["href"]?.stringValue, "/signalk/v1/requests/\(id)")
        XCTAssertEqual(j["action"]?["href"]?.stringValue, "/signalk/v1/requests/\(id)")
        let done = await r.sim.completeRequest(id, statusCode: 200)
        XCTAssertTrue(done)
        let again = await r.sim.completeRequest(id, statusCode: 200)
        XCTAssertFalse(again)
    }

    func testPutFailedSyncAndAsync() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let sim = r.sim
        let rest = try await adminREST(r, sleep: { _ in
            for id in await sim.pendingPutRequestIDs() { await sim.completeRequest(id, statusCode: 502, message: "no answer") }
        })
        await expectFailed(502, "device failed") { try await rest.put("electrical.switches.bilge.state", value: 1) }
        await expectFailed(502, "no answer") { try await rest.put("electrical.switches.deck.state", value: 1) }
    }

    // MARK: access requests

    func testAccessRequestApprovedTokenWorks() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let sim = r.sim
        let store = tokenStore(r.base)
        let clientId = try await store.clientId()
        let states = SignalKStateLog()
        let access = SignalKAccess(server: r.base, tokenStore: store, sleep: { _ in
            await sim.approveAccessRequest(clientId: clientId)
        })
        let token = try await access.requestAccess(
            description: "Lookout test", permissions: .readwrite, onState: { states.add($0) })
        guard case .pending(let href) = states.all.first else { return XCTFail("\(states.all)") }
        XCTAssertTrue(href.hasPrefix("/signalk/v1/requests/"))
        XCTAssertEqual(states.all.last, .approved)
        XCTAssertEqual(states.all.count, 2)
        let stored = await store.token()
        XCTAssertEqual(stored, token)
        let polled = try await SignalKREST(server: r.base).get(url: URL(string: href, relativeTo: r.base)!.absoluteURL)
        XCTAssertEqual(polled["accessRequest"]?["permission"]?.stringValue, "APPROVED")
        XCTAssertEqual(polled["statusCode"]?.intValue, 200)

        let rest = SignalKREST(server: r.base, tokenStore: store)
        let selfValue = try await rest.get("self")
        XCTAssertEqual(selfValue.stringValue, r.sim.selfContext)
        try await rest.put("electrical.switches.anchorLight.state", value: 1)  // readwrite may PUT

        let revoked = await sim.revokeDevice(clientId: clientId)
        XCTAssertTrue(revoked)
        await expectUnauthorized("bad auth token") { _ = try await rest.get("self") }
    }

    func testReadonlyDeviceCannotPutAndTokenExpires() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let sim = r.sim
        // The token's `exp` comes from the simulator's clock, so the store judges expiry by it too.
        let store = SignalKTokenStore(directory: skTempDir(), host: SignalKTokenStore.hostKey(for: r.base), now: r.clock.now)
        let clientId = try await store.clientId()
        let access = SignalKAccess(server: r.base, tokenStore: store, sleep: { _ in
            await sim.approveAccessRequest(clientId: clientId, expiresIn: 3600)
        })
        let token = try await access.requestAccess(description: "read only")
        XCTAssertNotNil(SignalKTokenStore.jwtExpiry(token))
        let rest = SignalKREST(server: r.base, tokenProvider: { token })
        _ = try await rest.get("self")
        await expectUnauthorized("Permission Denied") {
            try await rest.put("electrical.switches.anchorLight.state", value: 1)
        }
        r.clock.advance(by: 7200)
        await expectUnauthorized("bad auth token") { _ = try await rest.get("self") }
    }

    func testAccessRequestDenied() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let sim = r.sim
        let store = tokenStore(r.base)
        let clientId = try await store.clientId()
        let access = SignalKAccess(server: r.base, tokenStore: store, sleep: { _ in
            await sim.denyAccessRequest(clientId: clientId)
        })
        do {
            _ = try await access.requestAccess(description: "denied one")
            XCTFail("expected denial")
        } catch SignalKClientError.accessDenied {}
        let rec = try await store.load()
        XCTAssertTrue(rec.denied)
        let pending = await sim.pendingAccessRequests()
        XCTAssertFalse(pending.contains(clientId))
    }

    func testAccessRequestValidationAndDuplicate() async throws {
        let r = try await SignalKSecureSim.shared.get()
        let url = r.base.appendingPathComponent("signalk/v1/access/requests")
        let clientId = UUID().uuidString.lowercased()
        let first = try await raw("POST", url, #"{"clientId":"\#(clientId)","description":"one"}"#)
        XCTAssertEqual(first.status, 202)
        let j = try SignalKJSON.parse(first.body)
        XCTAssertEqual(j["state"]?.stringValue, "PENDING")
        XCTAssertEqual(j["statusCode"]?.intValue, 202)
        XCTAssertNotNil(j["ip"]?.stringValue)
        let dup = try await raw("POST", url, #"{"clientId":"\#(clientId)","description":"one"}"#)
        XCTAssertEqual(dup.status, 400)
        let d = try SignalKJSON.parse(dup.body)
        XCTAssertEqual(d["state"]?.stringValue, "COMPLETED")
        XCTAssertEqual(d["message"]?.stringValue, "A device with clientId '\(clientId)' has already requested access")
        let noDescription = try await raw("POST", url, #"{"clientId":"x-\#(clientId)"}"#)
        XCTAssertEqual(noDescription.status, 400)
        let badPermission = try await raw("POST", url, #"{"clientId":"y-\#(clientId)","description":"d","permissions":"root"}"#)
        XCTAssertEqual(badPermission.status, 400)
        let denied = await r.sim.denyAccessRequest(clientId: clientId)
        XCTAssertTrue(denied)
    }

    func testAccessRequestsUnavailableWithoutSecurity() async throws {
        let r = try await SignalKNetSim.shared.get()
        let access = SignalKAccess(server: r.base, tokenStore: tokenStore(r.base))
        do {
            _ = try await access.submit(description: "x")
            XCTFail("expected unavailable")
        } catch SignalKClientError.accessRequestsUnavailable(let status) {
            XCTAssertEqual(status, 404)
        }
        let resp = try await raw("POST", r.base.appendingPathComponent("signalk/v1/access/requests"),
                                 #"{"clientId":"a","description":"b"}"#)
        XCTAssertEqual(try SignalKJSON.parse(resp.body)["message"]?.stringValue,
                       "Access requests not available. Server security is not enabled.")
    }
}
