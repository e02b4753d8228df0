import Foundation
import XCTest

@testable import GarminKit

/// garth's token directory format (§10): fields, types, order, permissions, dumps/loads, env.
final class TokenStoreTests: XCTestCase {
    var dir: URL!

    override func setUp() {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("garmin-tokens-\(UUID().uuidString)/nested")
    }
    override func tearDown() { try? FileManager.default.removeItem(at: dir.deletingLastPathComponent()) }

    static let o1 = OAuth1Token(
        oauthToken: "7fdff19a", oauthTokenSecret: "49919d7c", mfaToken: "ab316f86",
        mfaExpirationTimestamp: GarminTimestamp.parse("2024-08-02 05:56:10.000"), domain: "garmin.com")
    static let o2 = OAuth2Token(
        scope: "CONNECT_READ CONNECT_WRITE", jti: "foo", tokenType: "Bearer", accessToken: "bar", refreshToken: "baz", expiresIn: 3599,
        expiresAt: 1_700_003_599, refreshTokenExpiresIn: 7199, refreshTokenExpiresAt: 1_700_007_199)

    func testFilesAreGarthShapedWithModes() throws {
        try GarminTokenStore.dump(GarminTokens(oauth1: Self.o1, oauth2: Self.o2), to: dir)
        let one = try String(contentsOf: dir.appendingPathComponent("oauth1_token.json"), encoding: .utf8)
        XCTAssertEqual(
            one,
            "{\n    \"oauth_token\": \"7fdff19a\",\n    \"oauth_token_secret\": \"49919d7c\",\n    \"mfa_token\": \"ab316f86\",\n    \"mfa_expiration_timestamp\": \"2024-08-02T05:56:10\",\n    \"domain\": \"garmin.com\"\n}")
        let two = try String(contentsOf: dir.appendingPathComponent("oauth2_token.json"), encoding: .utf8)
        XCTAssertEqual(
            two,
            "{\n    \"scope\": \"CONNECT_READ CONNECT_WRITE\",\n    \"jti\": \"foo\",\n    \"token_type\": \"Bearer\",\n    \"access_token\": \"bar\",\n    \"refresh_token\": \"baz\",\n    \"expires_in\": 3599,\n    \"expires_at\": 1700003599,\n    \"refresh_token_expires_in\": 7199,\n    \"refresh_token_expires_at\": 1700007199\n}")
        XCTAssertEqual(try Self.mode(dir), 0o700)
        XCTAssertEqual(try Self.mode(dir.appendingPathComponent("oauth1_token.json")), 0o600)
        XCTAssertEqual(try Self.mode(dir.appendingPathComponent("oauth2_token.json")), 0o600)
        XCTAssertEqual(try GarminTokenStore.load(from: dir), GarminTokens(oauth1: Self.o1, oauth2: Self.o2))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".tmp") }
        XCTAssertEqual(leftovers, [])
    }

    func testExistingLooseDirectoryIsTightened() throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try GarminTokenStore.writeOAuth2(Self.o2, to: dir)
        XCTAssertEqual(try Self.mode(dir), 0o700)
    }

    func testNullsAndMicrosecondsAndReadFormats() throws {
        let plain = OAuth1Token(oauthToken: "t", oauthTokenSecret: "s")
        XCTAssertTrue(PythonJSONWriter.object(plain.pythonPairs, indent: 4).contains("\"mfa_token\": null"))
        XCTAssertEqual(GarminTimestamp.isoformat(GarminTimestamp.parse("2024-08-02T05:56:10.5")!), "2024-08-02T05:56:10.500000")
        let same = GarminTimestamp.parse("2024-08-02T05:56:10")
        for text in ["2024-08-02 05:56:10.000", "2024-08-02T05:56:10Z", "2024-08-02T07:56:10+02:00", "1722578170"] {
            XCTAssertEqual(GarminTimestamp.parse(text), same, text)
        }
        XCTAssertNil(GarminTimestamp.parse("yesterday"))
        let json = #"{"oauth_token":"t","oauth_token_secret":"s","mfa_expiration_timestamp":1722578170,"extra":1}"#
        XCTAssertEqual(try JSONDecoder().decode(OAuth1Token.self, from: Data(json.utf8)).mfaExpirationTimestamp, same)
    }

    func testIntegerFieldsAcceptGarthEquivalentsOnly() throws {
        func decode(_ v: String) throws -> OAuth2Token {
            let json = #"{"scope":"s","jti":"j","token_type":"bearer","access_token":"a","refresh_token":"r","expires_in":1,"expires_at":"#
                + v + #","refresh_token_expires_in":2,"refresh_token_expires_at":3}"#
            return try JSONDecoder().decode(OAuth2Token.self, from: Data(json.utf8))
        }
        XCTAssertEqual(try decode("1700000000.0").expiresAt, 1_700_000_000)
        XCTAssertEqual(try decode("\"1700000000\"").expiresAt, 1_700_000_000)
        XCTAssertThrowsError(try decode("1700000000.5"))
        XCTAssertEqual(try decode("5").authorizationHeader, "Bearer a")
    }

    func testMalformedFileNamesTheProblem() throws {
        try GarminTokenStore.writeOAuth2(Self.o2, to: dir)
        try Data(#"{"oauth_token": "x"}"#.utf8).write(to: dir.appendingPathComponent("oauth1_token.json"))
        XCTAssertThrowsError(try GarminTokenStore.load(from: dir)) { e in
            XCTAssertEqual("\(e)", "Garmin: token store: oauth1_token.json is not a valid token file (missing oauth_token_secret)")
        }
    }

    func testDumpsLoadsRoundTripAndPythonShape() throws {
        let s = GarminTokenStore.dumps(GarminTokens(oauth1: Self.o1, oauth2: Self.o2))
        let text = String(decoding: Data(base64Encoded: s)!, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("[{\"oauth_token\": \"7fdff19a\", \"oauth_token_secret\": "), text)
        XCTAssertEqual(try GarminTokenStore.loads(s), GarminTokens(oauth1: Self.o1, oauth2: Self.o2))
        XCTAssertThrowsError(try GarminTokenStore.loads("not base64!"))
    }

    func testEnvironmentRules() throws {
        try GarminTokenStore.dump(GarminTokens(oauth1: Self.o1, oauth2: Self.o2), to: dir)
        let home = try GarminTokenStore.fromEnvironment(["GARTH_HOME": dir.path])
        XCTAssertEqual(home.directory?.path, dir.path)
        XCTAssertEqual(home.tokens?.oauth1, Self.o1)
        let token = try GarminTokenStore.fromEnvironment(["GARTH_TOKEN": GarminTokenStore.dumps(GarminTokens(oauth1: Self.o1, oauth2: nil))])
        XCTAssertNil(token.directory)
        XCTAssertEqual(token.tokens?.oauth1, Self.o1)
        XCTAssertThrowsError(try GarminTokenStore.fromEnvironment(["GARTH_HOME": "/tmp/x", "GARTH_TOKEN": "e30="])) { e in
            XCTAssertTrue("\(e)".contains("GARTH_HOME and GARTH_TOKEN cannot both be set"))
        }
        let empty = try GarminTokenStore.fromEnvironment(["GARTH_HOME": dir.appendingPathComponent("none").path])
        XCTAssertNil(empty.tokens)
    }

    func testDescriptionsMaskSecrets() {
        for text in ["\(Self.o1)", "\(Self.o2)", "\(OAuthConsumer(key: "ck", secret: "cs"))"] {
            for secret in ["7fdff19a", "49919d7c", "ab316f86", "bar", "baz", "cs"] {
                XCTAssertFalse(text.contains("\"\(secret)") || text.contains(" \(secret)"), "\(text) leaks \(secret)")
            }
        }
    }

    static func mode(_ url: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}
