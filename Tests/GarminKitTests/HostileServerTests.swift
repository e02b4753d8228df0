import Foundation
import LookoutWire
import XCTest

@testable import GarminKit

/// Answers a hostile or broken server might give, through an injected transport: each becomes
/// a typed error naming what was wrong (and nothing loops).
final class HostileServerTests: XCTestCase {
    /// A transport answering by path; counts requests.
    final class Script: @unchecked Sendable {
        // @unchecked Sendable: `count` is only touched under `lock`; `answer` is immutable.
        private let lock = NSLock()
        private var count = 0
        let answer: @Sendable (GarminHTTPRequest) -> GarminHTTPResponse
        init(_ answer: @escaping @Sendable (GarminHTTPRequest) -> GarminHTTPResponse) { self.answer = answer }
        var requests: Int { lock.withLock { count } }
        var transport: GarminTransport {
            GarminTransport { req, _ in
                self.lock.withLock { self.count += 1 }
                return self.answer(req)
            }
        }
    }

    static let base = URL(string: "http://127.0.0.1:9")!

    func client(_ script: Script, flow: GarminSSOFlow) throws -> GarminClient {
        var config = try GarminConfiguration.local(Self.base, ssoFlow: flow)
        config.consumer = OAuthConsumer(key: "k", secret: "s")
        return try GarminClient(configuration: config, transport: script.transport)
    }

    static func json(_ status: Int, _ text: String) -> GarminHTTPResponse {
        GarminHTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: Data(text.utf8))
    }
    static func html(_ text: String) -> GarminHTTPResponse { GarminHTTPResponse(status: 200, body: Data(text.utf8)) }

    func testMobileFlowStatusesAndBodies() async throws {
        let cases: [(String, GarminError)] = [
            (#"{"responseStatus": {"type": "CAPTCHA_REQUIRED", "message": ""}}"#, .sso(type: "CAPTCHA_REQUIRED", message: "")),
            (#"{"responseStatus": {"type": "ACCOUNT_LOCKED", "message": "locked"}}"#, .sso(type: "ACCOUNT_LOCKED", message: "locked")),
            (#"{"responseStatus": {"type": "SUCCESSFUL"}, "serviceTicketId": null}"#, .missingTicket),
            (#"<html>not json"#, .decoding("malformed JSON (14 bytes)")),
        ]
        for (body, expected) in cases {
            let script = Script { req in req.url.path == "/mobile/api/login" ? Self.json(200, body) : Self.html("") }
            let c = try client(script, flow: .mobile)
            await assertGarminError(expected) { try await c.login(email: "e", password: "p") }
        }
    }

    func testWidgetFlowPages() async throws {
        let cases: [(String, String, GarminError)] = [
            ("<html>no form</html>", "", .missingCSRF),
            (#"<input name="_csrf" value="c1">"#, "<title>Account Locked</title>", .unexpectedTitle("Account Locked")),
            (#"<input name="_csrf" value="c1">"#, "<title>Success</title> no ticket", .missingTicket),
        ]
        for (signinPage, resultPage, expected) in cases {
            let script = Script { req in
                req.method == "POST" ? Self.html(resultPage) : Self.html(req.url.path == "/sso/signin" ? signinPage : "")
            }
            let c = try client(script, flow: .widget)
            await assertGarminError(expected) { try await c.login(email: "e", password: "p") }
        }
    }

    func testBadPreauthorizedAndExchangeAnswers() async throws {
        func run(preauth: GarminHTTPResponse, exchange: GarminHTTPResponse, expect: GarminError) async throws {
            let script = Script { req in
                switch req.url.path {
                case "/mobile/api/login":
                    return Self.json(200, #"{"responseStatus": {"type": "SUCCESSFUL"}, "serviceTicketId": "ST-1-x-sso"}"#)
                case "/oauth-service/oauth/preauthorized": return preauth
                case "/oauth-service/oauth/exchange/user/2.0": return exchange
                default: return Self.html("")
                }
            }
            let c = try client(script, flow: .mobile)
            await assertGarminError(expect) { try await c.login(email: "e", password: "p") }
        }
        let good1 = GarminHTTPResponse(status: 200, body: Data("oauth_token=t&oauth_token_secret=s".utf8))
        try await run(
            preauth: GarminHTTPResponse(status: 200, body: Data("nothing=here".utf8)), exchange: Self.json(200, "{}"),
            expect: .decoding("preauthorized response: oauth_token and oauth_token_secret expected"))
        try await run(
            preauth: GarminHTTPResponse(status: 200, body: Data("oauth_token=t&oauth_token_secret=s&mfa_expiration_timestamp=soon".utf8)),
            exchange: Self.json(200, "{}"), expect: .decoding("preauthorized response: unreadable mfa_expiration_timestamp"))
        try await run(preauth: good1, exchange: Self.json(200, #"{"scope": "s"}"#), expect: .decoding("exchange response: expires_in missing or not an integer"))
        try await run(
            preauth: good1,
            exchange: Self.json(
                200,
                #"{"scope":"s","token_type":"bearer","access_token":"a","refresh_token":"r","expires_in":5,"refresh_token_expires_in":1}"#),
            expect: .decoding("exchange response: jti missing or not a string"))
        try await run(preauth: good1, exchange: Self.json(401, "{}"), expect: .oauth1Invalid)
        try await run(
            preauth: GarminHTTPResponse(status: 401, body: Data("oauth_token_secret=leak".utf8)), exchange: Self.json(200, "{}"),
            expect: .http(status: 401, body: "oauth_token_secret=***", url: "http://127.0.0.1:9/oauth-service/oauth/preauthorized"))
    }

    func testRetryAfterForms() {
        func r(_ v: String) -> TimeInterval? {
            GarminHTTPResponse(status: 429, headers: [("retry-after", v)]).retryAfter(now: Date(timeIntervalSince1970: 1_700_000_000))
        }
        XCTAssertEqual(r("120"), 120)
        XCTAssertEqual(r("Tue, 14 Nov 2023 22:16:40 GMT"), 200)
        XCTAssertEqual(r("Tue, 14 Nov 2023 22:00:00 GMT"), 0)
        XCTAssertNil(r("-5"))
        XCTAssertNil(r("soon"))
    }

    func testMalformedAPIJSONAndNoLoopOnLoginFailure() async throws {
        let script = Script { req in
            req.url.path == "/mobile/api/login" ? Self.json(429, "") : Self.json(200, "{\"truncated\": [1, 2")
        }
        let c = try client(script, flow: .mobile)
        await assertGarminError(.rateLimited(retryAfter: nil)) { try await c.login(email: "e", password: "p") }
        XCTAssertEqual(script.requests, 2, "sign-in page + one login POST, no retry")
        try await c.setTokens(
            GarminTokens(
                oauth1: OAuth1Token(oauthToken: "t", oauthTokenSecret: "s"),
                oauth2: OAuth2Token(
                    scope: "s", jti: "j", tokenType: "bearer", accessToken: "a", refreshToken: "r", expiresIn: 1, expiresAt: Int.max / 2,
                    refreshTokenExpiresIn: 1, refreshTokenExpiresAt: Int.max / 2)))
        await assertGarminError(.decoding("malformed JSON (19 bytes)")) { try await c.get("/x") }
        do {
            _ = try await c.profile()
            XCTFail("expected a decoding error")
        } catch GarminError.decoding(let m) {
            XCTAssertTrue(m.hasPrefix("GarminProfile from /userprofile-service/socialProfile"), m)
        }
    }
}
