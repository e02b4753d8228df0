import AsyncHTTPClient
import Foundation
import LookoutSim
import XCTest

final class NightscoutAuthTests: XCTestCase {
    func testSecretHashGrantsAdminAndPlainSecretDoesNot() async throws {
        let h = SimHarness { $0.defaultRoles = ["denied"] }
        try await h.start()
        let ok = try await h.request(.GET, "/api/v1/experiments/test", headers: [("API-SECRET", SimHarness.secretHash.uppercased())])
        XCTAssertEqual(ok.status, 200)
        XCTAssertEqual(ok.json, ["status": "ok"])
        let plain = try await h.request(.GET, "/api/v1/experiments/test", headers: [("api-secret", SimHarness.secret)])
        XCTAssertEqual(plain.status, 401)
        XCTAssertEqual(plain.json, ["status": 401, "message": "Unauthorized", "description": "Invalid/Missing"])
        let q = try await h.request(.GET, "/api/v1/entries.json?secret=\(SimHarness.secretHash)")
        XCTAssertEqual(q.status, 200)
        await h.stop()
    }

    func testAccessTokenFormatQueryHeaderAndHashedForms() async throws {
        let h = SimHarness { $0.defaultRoles = ["denied"] }
        try await h.start()
        let token = await h.sim.addSubject(name: "Test Readable!", roles: ["readable"])
        XCTAssertTrue(token.hasPrefix("testreadab-"), token)
        XCTAssertEqual(token.split(separator: "-").last?.count, 16)
        for headers in [
            [("api-secret", token)], [("api-secret", sha1(token))], [("api-secret", "token=" + token)],
        ] {
            let r = try await h.request(.GET, "/api/v1/entries.json", headers: headers)
            XCTAssertEqual(r.status, 200, "\(headers)")
        }
        let q = try await h.request(.GET, "/api/v1/entries.json?token=\(token)")
        XCTAssertEqual(q.status, 200)
        // A read token cannot create.
        let w = try await h.request(.POST, "/api/v1/entries?token=\(token)", body: [["date": 1_714_557_600_000, "type": "sgv", "sgv": 100]])
        XCTAssertEqual(w.status, 401)
        let none = try await h.request(.GET, "/api/v1/entries.json")
        XCTAssertEqual(none.status, 401)
        await h.stop()
    }

    func testVerifyAuth() async throws {
        let h = SimHarness()
        try await h.start()
        let admin = try await h.request(.GET, "/api/v1/verifyauth", headers: h.secretHeader)
        XCTAssertEqual(admin.status, 200)
        XCTAssertEqual(
            admin.json,
            ["status": 200, "message": ["canRead": true, "canWrite": true, "isAdmin": true, "message": "OK",
                                        "rolefound": "NOTFOUND", "permissions": "ROLE"]])
        let anon = try await h.request(.GET, "/api/v1/verifyauth")
        XCTAssertEqual(anon.json?["message"]?["message"], "UNAUTHORIZED")
        XCTAssertEqual(anon.json?["message"]?["permissions"], "DEFAULT")
        XCTAssertEqual(anon.json?["message"]?["canRead"], true)
        let token = await h.sim.addSubject(name: "reader", roles: ["readable"])
        let sub = try await h.request(.GET, "/api/v1/verifyauth?token=\(token)")
        XCTAssertEqual(sub.json?["message"]?["rolefound"], "FOUND")
        XCTAssertEqual(sub.json?["message"]?["message"], "OK")
        XCTAssertEqual(sub.json?["message"]?["isAdmin"], false)
        await h.stop()
    }

    /// `lib/authorization/index.js` `resolve`: a credential that does not resolve gets no
    /// permissions at all ("All validation failed"), not the default roles that a request with no
    /// credential gets; an unknown `?token=` counts as no credential (`authorize` finds no subject).
    func testCredentialThatDoesNotResolveGetsNoPermissionsNotTheDefaults() async throws {
        let h = SimHarness()  // default roles: readable
        try await h.start()
        await h.sim.seed("entries", [["type": "sgv", "sgv": 104, "date": 1_714_557_000_000]])
        let none = try await h.request(.GET, "/api/v1/entries.json")
        XCTAssertEqual(none.status, 200)
        let anon = try await h.request(.GET, "/api/v1/verifyauth")
        XCTAssertEqual(anon.json?["message"]?["canRead"], true)
        let reader = try await h.bearer("reader", roles: ["readable"])
        let refused: [(String, [(String, String)], String)] = [
            ("plain secret", [("api-secret", SimHarness.secret)], ""),
            ("wrong secret", [("api-secret", sha1("not the secret phrase"))], ""),
            ("wrong secret in the query", [], "?secret=\(sha1("not the secret phrase"))"),
            ("unknown token in api-secret", [("api-secret", "nobody-0123456789abcdef")], ""),
            ("bad JWT", [("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.e30.c2ln")], ""),
            ("raw token as Bearer", [("Authorization", "Bearer nobody-0123456789abcdef")], ""),
        ]
        for (what, headers, query) in refused {
            let v = try await h.request(.GET, "/api/v1/verifyauth" + query, headers: headers)
            XCTAssertEqual(v.status, 200, what)
            XCTAssertEqual(
                v.json?["message"],
                ["canRead": false, "canWrite": false, "isAdmin": false, "message": "UNAUTHORIZED",
                 "rolefound": "NOTFOUND", "permissions": "ROLE"], what)
            let read = try await h.request(.GET, "/api/v1/entries.json" + query, headers: headers)
            XCTAssertEqual(read.status, 401, what)
            XCTAssertEqual(read.json, ["status": 401, "message": "Unauthorized", "description": "Invalid/Missing"], what)
            let status = try await h.request(.GET, "/api/v1/status.json" + query, headers: headers)
            XCTAssertEqual(status.status, 401, what)
        }
        // An unknown token in the query is no credential: the defaults.
        let unknownQuery = try await h.request(.GET, "/api/v1/entries.json?token=nobody-0123456789abcdef")
        XCTAssertEqual(unknownQuery.status, 200)
        // A valid credential still works, with the default roles added.
        let ok = try await h.request(.GET, "/api/v1/entries.json", headers: reader)
        XCTAssertEqual(ok.status, 200)
        await h.stop()
    }

    func testJWTExchangeAndExpiryWithInjectedClock() async throws {
        let h = SimHarness { $0.jwtLifetime = 3600 }
        try await h.start()
        let token = await h.sim.addSubject(name: "test-apiAll", roles: ["admin"])
        let r = try await h.request(.GET, "/api/v2/authorization/request/\(token)")
        XCTAssertEqual(r.status, 200)
        let j = try XCTUnwrap(r.json)
        XCTAssertEqual(j["sub"], "test-apiAll")
        XCTAssertEqual(j["iat"], .int(1_714_557_600))
        XCTAssertEqual(j["exp"], .int(1_714_557_600 + 3600))
        XCTAssertEqual(j["permissionGroups"], [["*"], ["*:*:read"]])
        let jwt = try XCTUnwrap(j["token"]?.stringValue)
        // A JWT is re-issued through the same endpoint.
        let again = try await h.request(.GET, "/api/v2/authorization/request/\(jwt)")
        XCTAssertEqual(again.status, 200)
        let ok = try await h.request(.GET, "/api/v3/entries", headers: [("Authorization", "bearer \(jwt)")])
        XCTAssertEqual(ok.status, 200)
        // v1 accepts Bearer (case-sensitive scheme).
        let v1 = try await h.request(.GET, "/api/v1/experiments/test", headers: [("Authorization", "Bearer \(jwt)")])
        XCTAssertEqual(v1.status, 200)
        h.clock.advance(by: 3601)
        let expired = try await h.request(.GET, "/api/v3/entries", headers: [("Authorization", "Bearer \(jwt)")])
        XCTAssertEqual(expired.status, 401)
        XCTAssertEqual(expired.json, ["status": 401, "message": "Bad access token or JWT"])
        let unknown = try await h.request(.GET, "/api/v2/authorization/request/nobody-0123456789abcdef")
        XCTAssertEqual(unknown.status, 401)
        XCTAssertEqual(unknown.json, ["status": 401, "message": "Unauthorized", "description": "Invalid/Missing"])
        await h.stop()
    }

    func testV3RejectsSecretsAndAccessTokensAndChecksPermissions() async throws {
        let h = SimHarness()
        try await h.start()
        let missing = try await h.request(.GET, "/api/v3/entries", headers: h.secretHeader)
        XCTAssertEqual(missing.status, 401)
        XCTAssertEqual(missing.json, ["status": 401, "message": "Missing or bad access token or JWT"])
        let token = await h.sim.addSubject(name: "reader", roles: ["readable"])
        let tokenQuery = try await h.request(.GET, "/api/v3/entries?token=\(token)")
        XCTAssertEqual(tokenQuery.status, 401)
        let badShape = try await h.request(.GET, "/api/v3/entries", headers: [("Authorization", "Bearer a b")])
        XCTAssertEqual(badShape.json, ["status": 401, "message": "Missing or bad access token or JWT"])
        let rawToken = try await h.request(.GET, "/api/v3/entries", headers: [("Authorization", "Bearer \(token)")])
        XCTAssertEqual(rawToken.json, ["status": 401, "message": "Bad access token or JWT"])
        let reader = [("Authorization", "Bearer " + (try await h.jwt(for: token)))]
        let denied = try await h.request(
            .POST, "/api/v3/treatments", headers: reader,
            body: ["date": 1_613_057_404_186, "app": "t", "eventType": "Note"])
        XCTAssertEqual(denied.status, 403)
        XCTAssertEqual(denied.json, ["status": 403, "message": "Missing permission api:treatments:create"])
        let settings = try await h.request(.GET, "/api/v3/settings", headers: reader)
        XCTAssertEqual(settings.json, ["status": 403, "message": "Missing permission api:settings:admin"])
        await h.stop()
    }

    func testFailedLoginDelayAccumulatesAndClearsOnSuccess() async throws {
        let h = SimHarness { $0.authFailDelay = .milliseconds(1) }
        try await h.start()
        for _ in 0..<3 {
            _ = try await h.request(.GET, "/api/v1/entries.json", headers: [("api-secret", "wrong")])
        }
        let pending = await h.sim.pendingAuthDelayMilliseconds()
        XCTAssertEqual(pending, 3)
        let failed = await h.sim.failedAuthenticationCount()
        XCTAssertEqual(failed, 3)
        _ = try await h.request(.GET, "/api/v1/entries.json", headers: h.secretHeader)
        let cleared = await h.sim.pendingAuthDelayMilliseconds()
        XCTAssertEqual(cleared, 0)
        await h.stop()
    }

    func testShortSecretRefusedAndDisabledSecurity() async throws {
        let short = NightscoutSimulator(options: .init(apiSecret: "short"))
        do {
            _ = try await short.start()
            XCTFail("expected apiSecretTooShort")
        } catch NightscoutSimulator.SimulatorError.apiSecretTooShort {}
        let open = SimHarness { $0.api3Security = false }
        try await open.start()
        let r = try await open.request(.POST, "/api/v3/food", body: ["date": 1_714_557_600_000, "app": "t", "name": "apple"])
        XCTAssertEqual(r.status, 201)
        await open.stop()
    }

    private func sha1(_ s: String) -> String {
        NightscoutSimulator.sha1Hex(s)
    }
}
