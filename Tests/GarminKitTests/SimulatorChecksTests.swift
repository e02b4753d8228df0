import Foundation
import LookoutWire
import LookoutSim
import XCTest

@testable import GarminKit

/// The simulator really checks what GarminKit must get right (so the login tests can fail):
/// signatures, one-shot tickets, `login-url`, `audience` only on a mobile login's first exchange,
/// `mfa_token` echo, exact SSO query parameters.
final class SimulatorChecksTests: XCTestCase {
    let transport = GarminTransport.asyncHTTPClient()

    func send(_ method: String, _ url: URL, form: [(String, String)] = [], consumer: OAuthConsumer, token: OAuth1Signer.Token?)
        async throws -> GarminHTTPResponse
    {
        let signed = OAuth1Signer.sign(
            method: method, url: url, formParameters: form, consumer: consumer, token: token, nonce: OAuth1Signer.makeNonce(),
            timestamp: Int(Date().timeIntervalSince1970))
        var headers = [("User-Agent", GarminKit.oauthUserAgent), ("Authorization", signed.authorizationHeader)]
        if method == "POST" { headers.append(("Content-Type", "application/x-www-form-urlencoded")) }
        let body = method == "POST" ? Data(OAuth1Signer.encodeForm(form).utf8) : nil
        return try await transport.send(GarminHTTPRequest(method: method, url: url, headers: headers, body: body), 10)
    }

    /// A fresh mobile-flow ticket from the simulator's JSON login.
    func ticket(_ url: URL, email: String = GarminTest.email) async throws -> String {
        let jar = GarminCookieJar()
        let signIn = try await transport.send(
            GarminHTTPRequest(method: "GET", url: GarminURL.make(url, "/mobile/sso/en/sign-in", [("clientId", GarminKit.clientID)])), 10)
        await jar.store(signIn)
        let login = GarminURL.make(
            url, "/mobile/api/login",
            [("clientId", GarminKit.clientID), ("locale", "en-US"), ("service", GarminKit.mobileServiceURL(domain: "garmin.com"))])
        let body = #"{"username": "\#(email)", "password": "\#(GarminTest.password)", "rememberMe": false, "captchaToken": ""}"#
        let r = try await transport.send(
            GarminHTTPRequest(
                method: "POST", url: login, headers: [("Content-Type", "application/json"), ("Cookie", await jar.header() ?? "")],
                body: Data(body.utf8)), 10)
        return try XCTUnwrap(JSONValue.parse(r.body)["serviceTicketId"]?.stringValue)
    }

    func testSignaturesTicketsLoginURLAndAudience() async throws {
        let (sim, url) = try await GarminSims.shared.sim("checks", .init(consumerSecret: "right-secret"))
        let good = OAuthConsumer(key: sim.options.consumerKey, secret: "right-secret")
        let bad = OAuthConsumer(key: sim.options.consumerKey, secret: "wrong-secret")
        func preauth(_ t: String, loginURL: String = GarminKit.mobileServiceURL(domain: "garmin.com")) -> URL {
            GarminURL.make(
                url, "/oauth-service/oauth/preauthorized", [("ticket", t), ("login-url", loginURL), ("accepts-mfa-tokens", "true")])
        }
        let t1 = try await ticket(url)
        let badSig = try await send("GET", preauth(t1), consumer: bad, token: nil)
        XCTAssertEqual(badSig.status, 401)
        let wrongLoginURL = try await send("GET", preauth(t1, loginURL: "https://sso.garmin.com/sso/embed"), consumer: good, token: nil)
        XCTAssertEqual(wrongLoginURL.status, 400, wrongLoginURL.text)
        let t2 = try await ticket(url)
        let ok = try await send("GET", preauth(t2), consumer: good, token: nil)
        XCTAssertEqual(ok.status, 200)
        let reused = try await send("GET", preauth(t2), consumer: good, token: nil)
        XCTAssertEqual(reused.status, 401, "tickets are one-shot")
        let fields = Dictionary(OAuth1Signer.decodeForm(ok.text), uniquingKeysWith: { a, _ in a })
        let token = OAuth1Signer.Token(key: fields["oauth_token"]!, secret: fields["oauth_token_secret"]!)
        let exchange = GarminURL.make(url, "/oauth-service/oauth/exchange/user/2.0", [])
        let noAudience = try await send("POST", exchange, consumer: good, token: token)
        XCTAssertEqual(noAudience.status, 403, "a mobile login's first exchange needs audience")
        let wrongTokenSecret = try await send(
            "POST", exchange, form: [("audience", GarminKit.loginAudience)], consumer: good, token: .init(key: token.key, secret: "x"))
        XCTAssertEqual(wrongTokenSecret.status, 401)
        let login = try await send("POST", exchange, form: [("audience", GarminKit.loginAudience)], consumer: good, token: token)
        XCTAssertEqual(login.status, 200)
        let refreshWithAudience = try await send("POST", exchange, form: [("audience", GarminKit.loginAudience)], consumer: good, token: token)
        XCTAssertEqual(refreshWithAudience.status, 403, "Client app validation failed")
        let refresh = try await send("POST", exchange, consumer: good, token: token)
        XCTAssertEqual(refresh.status, 200)
    }

    func testMFATokenMustBeEchoedAndLoginQueryIsExact() async throws {
        let (sim, url) = try await GarminSims.shared.sim("checks", .init(consumerSecret: "right-secret"))
        let c = try GarminTest.client(url, flow: .mobile)
        guard case .success(let o1, _) = try await c.login(email: GarminTest.mfaEmail, password: GarminTest.password, mfa: { "123456" })
        else { return XCTFail("expected success") }
        let consumer = OAuthConsumer(key: sim.options.consumerKey, secret: "right-secret")
        let token = OAuth1Signer.Token(key: o1.oauthToken, secret: o1.oauthTokenSecret)
        let exchange = GarminURL.make(url, "/oauth-service/oauth/exchange/user/2.0", [])
        let without = try await send("POST", exchange, consumer: consumer, token: token)
        XCTAssertEqual(without.status, 401, "mfa_token must be sent")
        let with = try await send("POST", exchange, form: [("mfa_token", o1.mfaToken!)], consumer: consumer, token: token)
        XCTAssertEqual(with.status, 200)
        let wrongService = GarminURL.make(
            url, "/mobile/api/login", [("clientId", GarminKit.clientID), ("locale", "en-US"), ("service", "http://127.0.0.1/gcm/android")])
        let r = try await transport.send(GarminHTTPRequest(method: "POST", url: wrongService, body: Data("{}".utf8)), 10)
        XCTAssertEqual(r.status, 400, "service is built from the domain, never from the transport override")
    }
}
