import AsyncHTTPClient
import Foundation
import LookoutSim
import LookoutWire
import NIOCore
import NIOHTTP1
import XCTest

/// Secured simulators shared by the process and never stopped: `strict` (no anonymous reads) and
/// `readOnly` (`allowReadOnly`). Users: `admin` (admin), `reader` (readonly).
actor SKSecuredSims {
    static let shared = SKSecuredSims()
    struct Running: Sendable {
        let sim: SignalKSimulator
        let base: URL
        let notices: Locked<[SignalKAccessRequestNotice]>
    }
    private var sims: [Bool: Running] = [:]

    func get(allowReadOnly: Bool) async throws -> Running {
        if let r = sims[allowReadOnly] { return r }
        let notices = Locked<[SignalKAccessRequestNotice]>([])
        let sim = try SignalKSimulator(options: .init(
            seed: 9, autoTick: false, security: true, users: ["admin": "admin-pw", "reader": "reader-pw"],
            userRoles: ["reader": "readonly"], allowReadOnly: allowReadOnly,
            onAccessRequest: { n in notices.withLock { $0.append(n) } }))
        let r = Running(sim: sim, base: try await sim.start(), notices: notices)
        sims[allowReadOnly] = r
        return r
    }
}

/// Security from the admin's side (issue 17): the access-request admin API, user roles and
/// anonymous reads, over real HTTP and WebSocket.
final class SignalKAdminTests: XCTestCase {
    func http(_ method: HTTPMethod, _ base: URL, _ path: String, body: JSONValue? = nil,
              headers: [(String, String)] = []) async throws -> (Int, JSONValue?, String) {
        var req = HTTPClientRequest(url: base.absoluteString + path)
        req.method = method
        for (k, v) in headers { req.headers.add(name: k, value: v) }
        if let body {
            req.headers.add(name: "Content-Type", value: "application/json")
            req.body = .bytes(ByteBuffer(string: body.jsonString))
        }
        let resp = try await HTTPClient.shared.execute(req, timeout: .seconds(20))
        let data = Data(buffer: try await resp.body.collect(upTo: 1 << 20))
        return (Int(resp.status.code), try? JSONValue.parse(data), String(decoding: data, as: UTF8.self))
    }

    func login(_ base: URL, _ user: String, _ password: String) async throws -> String {
        let (status, body, text) = try await http(.POST, base, "/signalk/v1/auth/login", body: ["username": .string(user), "password": .string(password)])
        XCTAssertEqual(status, 200, text)
        return try XCTUnwrap(body?["token"]?.stringValue)
    }

    func requestAccess(_ base: URL, _ clientId: String, permissions: String?) async throws -> String {
        var body: [String: JSONValue] = ["clientId": .string(clientId), "description": "Helm iPad"]
        if let permissions { body["permissions"] = .string(permissions) }
        let (status, reply, text) = try await http(.POST, base, "/signalk/v1/access/requests", body: .object(body))
        XCTAssertEqual(status, 202, text)
        return try XCTUnwrap(reply?["href"]?.stringValue)
    }

    func testAdminApprovesThroughTheAdminAPIAndTheDeviceTokenWorks() async throws {
        let r = try await SKSecuredSims.shared.get(allowReadOnly: false)
        let clientId = UUID().uuidString.lowercased()
        let href = try await requestAccess(r.base, clientId, permissions: "readwrite")
        let notice = try XCTUnwrap(r.notices.withLock { $0 }.first { $0.clientId == clientId })
        XCTAssertEqual(notice.description, "Helm iPad")
        XCTAssertEqual(notice.permissions, "readwrite")

        let listPath = "/skServer/security/access/requests"
        let (anon, anonBody, _) = try await http(.GET, r.base, listPath)
        XCTAssertEqual(anon, 401)
        XCTAssertEqual(anonBody, "Security config not allowed")
        let reader = try await login(r.base, "reader", "reader-pw")
        let (readerStatus, _, _) = try await http(.GET, r.base, listPath, headers: [("Authorization", "Bearer " + reader)])
        XCTAssertEqual(readerStatus, 401, "a readonly user may not configure")
        let admin = try await login(r.base, "admin", "admin-pw")
        let bearer = [("Authorization", "Bearer " + admin)]
        let (listed, list, _) = try await http(.GET, r.base, listPath, headers: bearer)
        XCTAssertEqual(listed, 200)
        let mine = try XCTUnwrap(list?.arrayValue?.first { $0["accessIdentifier"]?.stringValue == clientId })
        XCTAssertEqual(mine["accessDescription"], "Helm iPad")
        XCTAssertEqual(mine["permissions"], "readwrite")

        let decide = "/skServer/security/access/requests/\(clientId)/approved"
        let (refused, _, _) = try await http(.PUT, r.base, decide, body: ["permissions": "readonly", "expiration": "1y"])
        XCTAssertEqual(refused, 401)
        let (ok, _, okText) = try await http(.PUT, r.base, decide, body: ["permissions": "readonly", "expiration": "1y"], headers: bearer)
        XCTAssertEqual(ok, 200)
        XCTAssertEqual(okText, "Request updated")
        let (again, _, againText) = try await http(.PUT, r.base, decide, body: ["permissions": "readonly"], headers: bearer)
        XCTAssertEqual(again, 500, "no longer pending")
        XCTAssertEqual(againText, "Unable update request")

        let (_, polled, _) = try await http(.GET, r.base, href)
        XCTAssertEqual(polled?["state"], "COMPLETED")
        XCTAssertEqual(polled?["accessRequest"]?["permission"], "APPROVED")
        let token = try XCTUnwrap(polled?["accessRequest"]?["token"]?.stringValue)
        let payload = try XCTUnwrap(jwtPayload(token))
        let iat = try XCTUnwrap(payload["iat"]?.doubleValue), exp = try XCTUnwrap(payload["exp"]?.doubleValue)
        XCTAssertEqual(exp - iat, 31_557_600, accuracy: 1, "expiration 1y")
        // What the device asked for (readwrite) wins over the admin's readonly: it may PUT (→ 405,
        // no handler), not 401.
        let device = [("Authorization", "Bearer " + token)]
        let (put, _, putText) = try await http(
            .PUT, r.base, "/signalk/v1/api/vessels/self/electrical/switches/x/state", body: ["value": 1], headers: device)
        XCTAssertEqual(put, 405, putText)
        let (read, _, _) = try await http(.GET, r.base, "/signalk/v1/api/vessels/self", headers: device)
        XCTAssertEqual(read, 200)
    }

    func testAdminDeniesWithTheCookieAndBadDecisionsAreRefused() async throws {
        let r = try await SKSecuredSims.shared.get(allowReadOnly: false)
        let admin = try await login(r.base, "admin", "admin-pw")
        let cookie = [("Cookie", "JAUTHENTICATION=\(admin)")]
        let denied = UUID().uuidString.lowercased()
        let href = try await requestAccess(r.base, denied, permissions: nil)
        let (status, _, text) = try await http(.PUT, r.base, "/skServer/security/access/requests/\(denied)/denied", body: [:], headers: cookie)
        XCTAssertEqual(status, 200, text)
        let (_, polled, _) = try await http(.GET, r.base, href)
        XCTAssertEqual(polled?["accessRequest"], ["permission": "DENIED"])

        let undecided = UUID().uuidString.lowercased()
        _ = try await requestAccess(r.base, undecided, permissions: nil)
        for (path, body) in [
            ("/skServer/security/access/requests/\(undecided)/approved", JSONValue.object([:])),  // no permissions chosen
            ("/skServer/security/access/requests/\(undecided)/maybe", JSONValue.object([:])),
            ("/skServer/security/access/requests/no-such-client/approved", ["permissions": "readonly"]),
        ] {
            let (s, _, t) = try await http(.PUT, r.base, path, body: body, headers: cookie)
            XCTAssertEqual(s, 500, path)
            XCTAssertEqual(t, "Unable update request", path)
        }
        // The old path without /skServer works too.
        let (old, _, _) = try await http(
            .PUT, r.base, "/security/access/requests/\(undecided)/approved", body: ["permissions": "readonly"], headers: cookie)
        XCTAssertEqual(old, 200)
    }

    func testUserRolesAndLoginStatus() async throws {
        let r = try await SKSecuredSims.shared.get(allowReadOnly: false)
        let reader = try await login(r.base, "reader", "reader-pw")
        let auth = [("Authorization", "Bearer " + reader), ("Accept", "application/json")]
        let (read, _, _) = try await http(.GET, r.base, "/signalk/v1/api/vessels/self", headers: auth)
        XCTAssertEqual(read, 200)
        let (put, body, _) = try await http(
            .PUT, r.base, "/signalk/v1/api/vessels/self/electrical/switches/x/state", body: ["value": 1], headers: auth)
        XCTAssertEqual(put, 401)
        XCTAssertEqual(body, ["error": "Permission Denied"])
        let (_, status, _) = try await http(.GET, r.base, "/skServer/loginStatus", headers: auth)
        XCTAssertEqual(status?["status"], "loggedIn")
        XCTAssertEqual(status?["userLevel"], "readonly")
        XCTAssertEqual(status?["username"], "reader")
        XCTAssertEqual(status?["authenticationRequired"], true)
        XCTAssertEqual(status?["readOnlyAccess"], false)
        let (_, anon, _) = try await http(.GET, r.base, "/skServer/loginStatus")
        XCTAssertEqual(anon?["status"], "notLoggedIn")
        let (noToken, _, _) = try await http(.GET, r.base, "/signalk/v1/api/vessels/self")
        XCTAssertEqual(noToken, 401)
    }

    func testAllowReadOnlyLetsAnonymousReadButNotWrite() async throws {
        let r = try await SKSecuredSims.shared.get(allowReadOnly: true)
        let (read, model, _) = try await http(.GET, r.base, "/signalk/v1/api/vessels/self")
        XCTAssertEqual(read, 200)
        XCTAssertNotNil(model?["navigation"])
        let (put, _, _) = try await http(
            .PUT, r.base, "/signalk/v1/api/vessels/self/electrical/switches/x/state", body: ["value": 1])
        XCTAssertEqual(put, 401)
        let (_, status, _) = try await http(.GET, r.base, "/skServer/loginStatus")
        XCTAssertEqual(status?["readOnlyAccess"], true)
        // The stream sends cached values to an anonymous socket (not hello-then-silence).
        let ws = SKTestSocket("ws://127.0.0.1:\(r.base.port!)/signalk/v1/stream")
        let hello = await ws.nextJSON()
        XCTAssertEqual(hello?["name"], "signalk-server")
        let first = await ws.nextJSON()
        XCTAssertNotNil(first?["updates"], "cached values follow the hello")
        await ws.close()
    }

    func testAdminAPIWithoutSecurityIs404() async throws {
        let r = try await SKSharedSims.shared.boat()
        let (status, body, _) = try await http(.PUT, r.base, "/skServer/security/access/requests/x/approved", body: [:])
        XCTAssertEqual(status, 404)
        XCTAssertEqual(body, ["message": "Access requests not available. Server security may not be enabled."])
    }

    func jwtPayload(_ token: String) -> JSONValue? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var s = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s).flatMap { try? JSONValue.parse($0) }
    }
}
