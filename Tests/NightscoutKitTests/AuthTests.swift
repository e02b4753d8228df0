import Foundation
@testable import NightscoutKit
import LookoutWire
import XCTest

final class CredentialsTests: XCTestCase {
    func testSpecSHA1Vector() {
        XCTAssertEqual(NightscoutCredentials.sha1Hex("this is my long pass phrase"), "b723e97aa97846eb92d5264f084b2823f57c4aa1")
        let c = NightscoutCredentials.apiSecret("this is my long pass phrase")
        XCTAssertEqual(c.apiSecretHeaderValue, "b723e97aa97846eb92d5264f084b2823f57c4aa1")
        XCTAssertEqual(c.v1Headers.map(\.name), ["api-secret"])
        XCTAssertEqual(c.v1Headers.map(\.value), ["b723e97aa97846eb92d5264f084b2823f57c4aa1"])
        XCTAssertFalse(c.supportsV3)
    }

    func testAccessTokenAndJWTHeaders() {
        let token = NightscoutCredentials.accessToken("testreadab-76eaff2418bfb7e0")
        XCTAssertEqual(token.apiSecretHeaderValue, NightscoutCredentials.sha1Hex("testreadab-76eaff2418bfb7e0"))
        XCTAssertTrue(token.supportsV3)
        let jwt = NightscoutCredentials.jwt("aaa.bbb.ccc")
        XCTAssertEqual(jwt.v1Headers.first?.name, "Authorization")
        XCTAssertEqual(jwt.v1Headers.first?.value, "Bearer aaa.bbb.ccc")
        XCTAssertNil(jwt.apiSecretHeaderValue)
        XCTAssertTrue(NightscoutCredentials.none.v1Headers.isEmpty)
    }

    func testSecretsAreRedacted() {
        let secret = "this is my long pass phrase"
        for c in [NightscoutCredentials.apiSecret(secret), .accessToken(secret), .jwt(secret)] {
            XCTAssertFalse(c.description.contains(secret))
            XCTAssertFalse(String(reflecting: c).contains(secret))
            XCTAssertFalse("\(c)".contains(secret))
            var dumped = ""
            dump(c, to: &dumped)
            XCTAssertFalse(dumped.contains(secret), dumped)
            XCTAssertTrue(c.description.contains("redacted"))
        }
        let grant = JWTGrant(token: "secret.jwt.value", sub: "me")
        XCTAssertFalse(grant.description.contains("secret.jwt.value"))
        var dumped = ""
        dump(grant, to: &dumped)
        XCTAssertFalse(dumped.contains("secret.jwt.value"), dumped)
    }
}

final class IdentifierTests: XCTestCase {
    func testSpecVectors() {
        XCTAssertEqual(NightscoutIdentifier.compute(device: "Samsung XCover 4-861536030196001", date: 1_613_057_404_186,
                                                    eventType: "Correction Bolus"),
                       "5b0f7124-475f-5db0-824c-a73c5eea0975")
        XCTAssertEqual(NightscoutIdentifier.name(device: nil, date: 1_613_057_404_186, eventType: nil), "undefined_1613057404186")
        XCTAssertEqual(NightscoutIdentifier.compute(device: nil, date: 1_613_057_404_186), "8430907c-30e4-573c-a1f0-3c5ff95a5411")
    }

    func testComputedIdentifierOnDocuments() throws {
        let t = try decode(Treatment.self, #"{"date":1613057404186,"app":"AndroidAPS","device":"Samsung XCover 4-861536030196001","eventType":"Correction Bolus","insulin":0.3}"#)
        XCTAssertEqual(t.computedIdentifier, "5b0f7124-475f-5db0-824c-a73c5eea0975")
        let e = Entry(common: CommonFields(date: NightscoutDate(epochMilliseconds: 1_613_057_404_186)))
        XCTAssertEqual(e.computedIdentifier, "8430907c-30e4-573c-a1f0-3c5ff95a5411")
        XCTAssertNil(Entry().computedIdentifier)
    }

    func testNamespaceBytesAndEmptyEventType() {
        XCTAssertEqual(NightscoutIdentifier.namespace.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(),
                       "4e6967687473636f7574526f636b7321")
        XCTAssertEqual(NightscoutIdentifier.compute(device: nil, date: 1_613_057_404_186, eventType: ""),
                       "8430907c-30e4-573c-a1f0-3c5ff95a5411")
    }
}

/// A mutable clock for tests.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Date
    init(_ start: Date) { value = start }
    var now: Date { lock.withLock { value } }
    func advance(_ seconds: TimeInterval) { lock.withLock { value = value.addingTimeInterval(seconds) } }
}

/// Scripted responses for the JWT exchange.
actor FakeAuthServer {
    var calls = 0
    var paths: [String] = []
    var status = 200
    var lifetime: TimeInterval = 8 * 3600
    var delayNanos: UInt64 = 0
    let clock: TestClock
    init(clock: TestClock) { self.clock = clock }

    func setStatus(_ s: Int) { status = s }
    func setDelay(_ n: UInt64) { delayNanos = n }

    func handle(_ path: String) async throws -> NightscoutHTTPResponse {
        calls += 1
        paths.append(path)
        let n = calls
        if delayNanos > 0 { try await Task.sleep(nanoseconds: delayNanos) }
        if status == 401 {
            return NightscoutHTTPResponse(status: 401, body: Data(#"{"status":401,"message":"Unauthorized","description":"Invalid/Missing"}"#.utf8))
        }
        if status != 200 { return NightscoutHTTPResponse(status: status, body: Data("boom".utf8)) }
        let iat = Int64(clock.now.timeIntervalSince1970)
        let exp = iat + Int64(lifetime)
        let token = makeJWT(["accessToken": .string("tok"), "iat": .int(iat), "exp": .int(exp), "n": .int(Int64(n))])
        let body = #"{"token":"\#(token)","sub":"test","permissionGroups":[["*"]],"iat":\#(iat),"exp":\#(exp)}"#
        return NightscoutHTTPResponse(status: 200, body: Data(body.utf8))
    }
}

func base64url(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

func makeJWT(_ payload: [String: JSONValue]) -> String {
    let header = base64url(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
    let body = base64url(try! JSONEncoder().encode(JSONValue.object(payload)))
    return header + "." + body + ".c2lnbmF0dXJl"
}

final class JWTCacheTests: XCTestCase {
    let start = Date(timeIntervalSince1970: 1_714_370_000)

    func testPayloadExpiration() {
        let jwt = makeJWT(["exp": .int(1_714_398_800), "iat": .int(1_714_370_000)])
        XCTAssertEqual(JWTPayload.expiration(of: jwt), Date(timeIntervalSince1970: 1_714_398_800))
        XCTAssertNil(JWTPayload.expiration(of: "not-a-jwt"))
        XCTAssertEqual(JWTCache.exchangePath(for: "testreadab-76eaff2418bfb7e0"),
                       "/api/v2/authorization/request/testreadab-76eaff2418bfb7e0")
        XCTAssertEqual(JWTCache.exchangePath(for: "a b/c"), "/api/v2/authorization/request/a%20b%2Fc")
    }

    func testCachesUntilShortlyBeforeExpiry() async throws {
        let clock = TestClock(start)
        let server = FakeAuthServer(clock: clock)
        let cache = JWTCache(accessToken: "tok", now: { clock.now }, fetch: { try await server.handle($0) })
        let t1 = try await cache.token()
        var dumped = ""
        dump(cache, to: &dumped)
        XCTAssertFalse(dumped.contains(t1))
        XCTAssertFalse(dumped.contains("tok"), dumped)
        let t2 = try await cache.token()
        XCTAssertEqual(t1, t2)
        var calls = await server.calls
        XCTAssertEqual(calls, 1)
        let paths = await server.paths
        XCTAssertEqual(paths, ["/api/v2/authorization/request/tok"])
        let exp = await cache.expiresAt
        XCTAssertEqual(exp, start.addingTimeInterval(8 * 3600))
        clock.advance(8 * 3600 - 301) // more than 5 min left: still cached
        _ = try await cache.token()
        calls = await server.calls
        XCTAssertEqual(calls, 1)
        clock.advance(2) // under 5 min left: refresh
        let t3 = try await cache.token()
        calls = await server.calls
        XCTAssertEqual(calls, 2)
        XCTAssertNotEqual(t1, t3)
    }

    func testHundredConcurrentCallersShareOneFetch() async throws {
        let clock = TestClock(start)
        let server = FakeAuthServer(clock: clock)
        await server.setDelay(50_000_000)
        let cache = JWTCache(accessToken: "tok", now: { clock.now }, fetch: { try await server.handle($0) })
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<100 { group.addTask { try await cache.token() } }
            var out: [String] = []
            for try await t in group { out.append(t) }
            return out
        }
        XCTAssertEqual(tokens.count, 100)
        XCTAssertEqual(Set(tokens).count, 1)
        let calls = await server.calls
        XCTAssertEqual(calls, 1)
        let exchanges = await cache.exchangeCount
        XCTAssertEqual(exchanges, 1)
    }

    func testRefetchesOnceOn401() async throws {
        let clock = TestClock(start)
        let server = FakeAuthServer(clock: clock)
        let cache = JWTCache(accessToken: "tok", now: { clock.now }, fetch: { try await server.handle($0) })
        let first = try await cache.token()
        let seen = Seen()
        let result = try await cache.withToken { jwt -> String in
            await seen.add(jwt)
            if jwt == first { throw NightscoutError.http(status: 401, body: #"{"status":401,"message":"Bad access token or JWT"}"#) }
            return "ok"
        }
        XCTAssertEqual(result, "ok")
        let tokens = await seen.items
        XCTAssertEqual(tokens.count, 2)
        XCTAssertEqual(tokens.first, first)
        XCTAssertNotEqual(tokens.last, first)
        let calls = await server.calls
        XCTAssertEqual(calls, 2)

        // A second 401 is not retried again.
        let attempts = Seen()
        do {
            _ = try await cache.withToken { jwt -> String in
                await attempts.add(jwt)
                throw NightscoutError.unauthorized(message: "Bad access token or JWT")
            }
            XCTFail("expected an error")
        } catch {
            XCTAssertTrue(JWTCache.isUnauthorized(error))
        }
        let n = await attempts.items.count
        XCTAssertEqual(n, 2)
    }

    func testNon401ErrorIsNotRetried() async throws {
        let clock = TestClock(start)
        let server = FakeAuthServer(clock: clock)
        let cache = JWTCache(accessToken: "tok", now: { clock.now }, fetch: { try await server.handle($0) })
        let attempts = Seen()
        do {
            _ = try await cache.withToken { jwt -> Int in
                await attempts.add(jwt)
                throw NightscoutError.http(status: 500, body: "")
            }
            XCTFail("expected an error")
        } catch {
            XCTAssertEqual(error as? NightscoutError, .http(status: 500, body: ""))
        }
        let n = await attempts.items.count
        XCTAssertEqual(n, 1)
    }

    func testFailedLoginBacksOff() async throws {
        let clock = TestClock(start)
        let server = FakeAuthServer(clock: clock)
        await server.setStatus(401)
        let cache = JWTCache(accessToken: "bad", failureDelay: 5, now: { clock.now }, fetch: { try await server.handle($0) })
        do { _ = try await cache.token(); XCTFail() } catch {
            XCTAssertEqual(error as? NightscoutError, .unauthorized(message: "Unauthorized"))
            XCTAssertFalse("\(error)".contains("bad"))
        }
        // Immediately again: refused locally, no request.
        do { _ = try await cache.token(); XCTFail() } catch {
            guard case .authenticationBackoff(let wait)? = error as? NightscoutError else { return XCTFail("\(error)") }
            XCTAssertEqual(wait, 5, accuracy: 0.001)
        }
        var calls = await server.calls
        XCTAssertEqual(calls, 1)
        clock.advance(5)
        do { _ = try await cache.token(); XCTFail() } catch {}
        calls = await server.calls
        XCTAssertEqual(calls, 2)
        // Second consecutive failure: 10 s (cumulative, like the server's delay list).
        clock.advance(9)
        do { _ = try await cache.token(); XCTFail() } catch {
            guard case .authenticationBackoff(let wait)? = error as? NightscoutError else { return XCTFail("\(error)") }
            XCTAssertEqual(wait, 1, accuracy: 0.001)
        }
        calls = await server.calls
        XCTAssertEqual(calls, 2)
        // Credentials fixed server-side: the next allowed attempt succeeds and clears the back-off.
        clock.advance(1)
        await server.setStatus(200)
        _ = try await cache.token()
        calls = await server.calls
        XCTAssertEqual(calls, 3)
    }

    func testServerErrorDoesNotBackOff() async throws {
        let clock = TestClock(start)
        let server = FakeAuthServer(clock: clock)
        await server.setStatus(503)
        let cache = JWTCache(accessToken: "tok", now: { clock.now }, fetch: { try await server.handle($0) })
        do { _ = try await cache.token(); XCTFail() } catch {
            XCTAssertEqual(error as? NightscoutError, .http(status: 503, body: "boom"))
        }
        await server.setStatus(200)
        _ = try await cache.token()
        let calls = await server.calls
        XCTAssertEqual(calls, 2)
    }
}

actor Seen {
    var items: [String] = []
    func add(_ s: String) { items.append(s) }
}
