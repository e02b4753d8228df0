import Foundation
import LookoutTestSupport
import XCTest

@testable import GarminKit

/// Interop with Python peers in a venv (`pip install oauthlib garth`):
/// - OAuth1 signatures equal oauthlib's for the same inputs (GET with query, POST with form
///   bodies that need double encoding, loopback URLs with ports, with and without a token);
/// - a token directory written by GarminKit loads with `garth.resume(dir)` with the same values and
///   types (`expires_at` an int, `mfa_expiration_timestamp` a datetime);
/// - a directory written by garth's `Client.dump` (tokens built in Python, no network) and its
///   `dumps()` string load in GarminKit with the same values.
/// Without python3/pip the tests are skipped with the reason.
final class PythonInteropTests: XCTestCase {
    static let venv = PythonVenv(label: "garth/oauthlib interop", packages: ["oauthlib", "garth"])

    override class func setUp() {
        super.setUp()
        venv.prepareIfNeeded()
    }
    override class func tearDown() {
        venv.removeWorkDirectory()
        super.tearDown()
    }

    func run(_ script: String, _ args: [String]) async throws -> String {
        let (python, work) = try Self.venv.pythonOrSkip()
        let file = work.appendingPathComponent("script-\(UUID().uuidString).py")
        try Data(script.utf8).write(to: file)
        let r = try await PythonVenv.runOffPool(python, [file.path] + args, timeout: 120, threadName: "garth-peer")
        XCTAssertTrue(r.succeeded, r.summary)
        return String(decoding: r.stdout, as: UTF8.self)
    }

    func testSignaturesMatchOAuthlib() async throws {
        struct Case { var method: String; var url: String; var body: String; var token: Bool }
        let cases = [
            Case(method: "GET", url: "https://connectapi.garmin.com/oauth-service/oauth/preauthorized?ticket=ST-1-abc-sso&login-url=https://mobile.integration.garmin.com/gcm/android&accepts-mfa-tokens=true", body: "", token: false),
            Case(method: "POST", url: "http://127.0.0.1:8080/oauth-service/oauth/exchange/user/2.0", body: "audience=GARMIN_CONNECT_MOBILE_ANDROID_DI&mfa_token=MFA-1571-abcDEF%2B%2F%3D-cas", token: true),
            Case(method: "POST", url: "https://connectapi.garmin.cn/oauth-service/oauth/exchange/user/2.0", body: "", token: true),
            Case(method: "GET", url: "http://localhost:9/a%20b/c?x=%E2%9C%93&y=1&y=0&z=a+b", body: "", token: true),
        ]
        let script = """
            import sys, json
            from oauthlib.oauth1 import Client
            c = json.loads(sys.argv[1])
            cl = Client(c["ck"], client_secret=c["cs"], resource_owner_key=c.get("tk"), resource_owner_secret=c.get("ts"),
                        nonce=c["nonce"], timestamp=c["ts_"])
            headers = {"Content-Type": "application/x-www-form-urlencoded"} if c["body"] else {}
            uri, h, body = cl.sign(c["url"], http_method=c["method"], body=c["body"] or None, headers=headers)
            print(h["Authorization"])
            """
        for (i, k) in cases.enumerated() {
            let consumer = OAuthConsumer(key: "ck-\(i)", secret: "cs &\(i)/é")
            let token = k.token ? OAuth1Signer.Token(key: "tok-\(i)", secret: "sec+\(i)=") : nil
            let nonce = OAuth1Signer.makeNonce()
            var input: [String: Any] = [
                "ck": consumer.key, "cs": consumer.secret, "nonce": nonce, "ts_": "1700000123", "url": k.url, "method": k.method,
                "body": k.body,
            ]
            if let token { input["tk"] = token.key; input["ts"] = token.secret }
            let json = String(decoding: try JSONSerialization.data(withJSONObject: input), as: UTF8.self)
            let header = try await run(script, [json]).trimmingCharacters(in: .whitespacesAndNewlines)
            let ours = OAuth1Signer.sign(
                method: k.method, url: URL(string: k.url)!, formParameters: OAuth1Signer.decodeForm(k.body), consumer: consumer,
                token: token, nonce: nonce, timestamp: 1_700_000_123)
            let theirs = header.components(separatedBy: "oauth_signature=\"").last?.components(separatedBy: "\"").first
            XCTAssertEqual(OAuth1Signer.percentEncode(ours.signature), theirs, "case \(i): \(header)")
        }
    }

    func testGarthResumesADirectoryWrittenByGarminKit() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("garth-interop-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let o1 = OAuth1Token(
            oauthToken: "tok-a", oauthTokenSecret: "sec-b", mfaToken: "MFA-1-x+/=-cas",
            mfaExpirationTimestamp: GarminTimestamp.parse("2027-08-03 23:53:05.250"), domain: "garmin.com")
        let o2 = OAuth2Token(
            scope: "CONNECT_READ CONNECT_WRITE", jti: "j-1", tokenType: "bearer", accessToken: "acc-c", refreshToken: "ref-d",
            expiresIn: 3600, expiresAt: 4_102_444_800, refreshTokenExpiresIn: 2_591_999, refreshTokenExpiresAt: 4_105_036_799)
        try GarminTokenStore.dump(GarminTokens(oauth1: o1, oauth2: o2), to: dir)
        let out = try await run(
            """
            import sys, json, garth
            garth.resume(sys.argv[1])
            a, b = garth.client.oauth1_token, garth.client.oauth2_token
            print(json.dumps({"oauth_token": a.oauth_token, "secret": a.oauth_token_secret, "mfa": a.mfa_token,
                "mfa_exp": a.mfa_expiration_timestamp.isoformat(), "domain": a.domain, "access": b.access_token,
                "type": b.token_type, "expires_at": b.expires_at, "int": type(b.expires_at).__name__, "expired": b.expired,
                "refresh_expires_at": b.refresh_token_expires_at, "header": str(b)}))
            """, [dir.path])
        let v = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any] ?? [:]
        XCTAssertEqual(v["oauth_token"] as? String, "tok-a")
        XCTAssertEqual(v["secret"] as? String, "sec-b")
        XCTAssertEqual(v["mfa"] as? String, "MFA-1-x+/=-cas")
        XCTAssertEqual(v["mfa_exp"] as? String, "2027-08-03T23:53:05.250000")
        XCTAssertEqual(v["domain"] as? String, "garmin.com")
        XCTAssertEqual(v["access"] as? String, "acc-c")
        XCTAssertEqual(v["expires_at"] as? Int, 4_102_444_800)
        XCTAssertEqual(v["int"] as? String, "int")
        XCTAssertEqual(v["expired"] as? Bool, false)
        XCTAssertEqual(v["refresh_expires_at"] as? Int, 4_105_036_799)
    }

    func testGarminKitLoadsWhatGarthDumped() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("garth-dump-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let dumps = try await run(
            """
            import sys, garth
            from datetime import datetime
            from garth.auth_tokens import OAuth1Token, OAuth2Token
            c = garth.Client()
            c.oauth1_token = OAuth1Token(oauth_token="py-tok", oauth_token_secret="py-sec", mfa_token="MFA-9",
                mfa_expiration_timestamp=datetime(2027, 1, 2, 3, 4, 5), domain="garmin.cn")
            c.oauth2_token = OAuth2Token(scope="CONNECT_READ", jti="py-jti", token_type="Bearer", access_token="py-acc",
                refresh_token="py-ref", expires_in=100, expires_at=1900000000, refresh_token_expires_in=200,
                refresh_token_expires_at=1900000100)
            c.dump(sys.argv[1])
            print(c.dumps())
            """, [dir.path]
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        let expected1 = OAuth1Token(
            oauthToken: "py-tok", oauthTokenSecret: "py-sec", mfaToken: "MFA-9",
            mfaExpirationTimestamp: GarminTimestamp.parse("2027-01-02T03:04:05"), domain: "garmin.cn")
        let expected2 = OAuth2Token(
            scope: "CONNECT_READ", jti: "py-jti", tokenType: "Bearer", accessToken: "py-acc", refreshToken: "py-ref", expiresIn: 100,
            expiresAt: 1_900_000_000, refreshTokenExpiresIn: 200, refreshTokenExpiresAt: 1_900_000_100)
        let fromDir = try GarminTokenStore.load(from: dir)
        XCTAssertEqual(fromDir, GarminTokens(oauth1: expected1, oauth2: expected2))
        XCTAssertEqual(try GarminTokenStore.loads(dumps), GarminTokens(oauth1: expected1, oauth2: expected2))
        // The client follows the token's domain (garmin.cn).
        let client = try GarminClient(configuration: .init(tokenDirectory: dir))
        let domain = await client.configuration.domain
        XCTAssertEqual(domain, "garmin.cn")
        // Our dumps() reads back in garth.
        let ours = GarminTokenStore.dumps(fromDir)
        let out = try await run(
            """
            import sys, garth
            c = garth.Client()
            c.loads(sys.argv[1])
            print(c.oauth1_token.oauth_token, c.oauth2_token.expires_at, c.domain)
            """, [ours])
        XCTAssertEqual(out.trimmingCharacters(in: .whitespacesAndNewlines), "py-tok 1900000000 garmin.cn")
    }
}
