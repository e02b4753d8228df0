import Foundation
import XCTest

@testable import GarminKit

/// The worked OAuth1 vectors of shared/specs/garmin.md §7 (computed there with oauthlib 4.0.1).
final class OAuth1SignatureTests: XCTestCase {
    let consumer = OAuthConsumer(key: "test-consumer-key", secret: "test-consumer-secret")
    let token = OAuth1Signer.Token(key: "test-oauth-token", secret: "test-oauth-token-secret")
    let nonce = "4572616e48616d6d65724c61686176"
    let exchangeURL = URL(string: "https://connectapi.garmin.com/oauth-service/oauth/exchange/user/2.0")!

    func testV1PreauthorizedWithoutToken() {
        let url = URL(
            string: "https://connectapi.garmin.com/oauth-service/oauth/preauthorized?ticket=ST-0172640-s7YMrcqSIs9rr46AGPLK-sso&login-url=https://mobile.integration.garmin.com/gcm/android&accepts-mfa-tokens=true")!
        let s = OAuth1Signer.sign(method: "GET", url: url, consumer: consumer, token: nil, nonce: nonce, timestamp: 1_700_000_000)
        XCTAssertEqual(
            s.normalizedParameters,
            "accepts-mfa-tokens=true&login-url=https%3A%2F%2Fmobile.integration.garmin.com%2Fgcm%2Fandroid&oauth_consumer_key=test-consumer-key&oauth_nonce=4572616e48616d6d65724c61686176&oauth_signature_method=HMAC-SHA1&oauth_timestamp=1700000000&oauth_version=1.0&ticket=ST-0172640-s7YMrcqSIs9rr46AGPLK-sso")
        XCTAssertEqual(
            s.baseString,
            "GET&https%3A%2F%2Fconnectapi.garmin.com%2Foauth-service%2Foauth%2Fpreauthorized&accepts-mfa-tokens%3Dtrue%26login-url%3Dhttps%253A%252F%252Fmobile.integration.garmin.com%252Fgcm%252Fandroid%26oauth_consumer_key%3Dtest-consumer-key%26oauth_nonce%3D4572616e48616d6d65724c61686176%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1700000000%26oauth_version%3D1.0%26ticket%3DST-0172640-s7YMrcqSIs9rr46AGPLK-sso")
        XCTAssertEqual(s.signature, "x0kp2DKbniqVBd8t6ZFDwG5kSy8=")
        XCTAssertFalse(s.authorizationHeader.contains("oauth_token="))
    }

    func testV1WithEncodedLoginURLIsTheSame() {
        let url = URL(
            string: "https://connectapi.garmin.com/oauth-service/oauth/preauthorized?ticket=ST-0172640-s7YMrcqSIs9rr46AGPLK-sso&login-url=https%3A%2F%2Fmobile.integration.garmin.com%2Fgcm%2Fandroid&accepts-mfa-tokens=true")!
        let s = OAuth1Signer.sign(method: "GET", url: url, consumer: consumer, token: nil, nonce: nonce, timestamp: 1_700_000_000)
        XCTAssertEqual(s.signature, "x0kp2DKbniqVBd8t6ZFDwG5kSy8=")
    }

    func testV2LoginExchangeAndHeader() {
        let s = OAuth1Signer.sign(
            method: "POST", url: exchangeURL, formParameters: [("audience", "GARMIN_CONNECT_MOBILE_ANDROID_DI")], consumer: consumer,
            token: token, nonce: nonce, timestamp: 1_700_000_000)
        XCTAssertEqual(
            s.baseString,
            "POST&https%3A%2F%2Fconnectapi.garmin.com%2Foauth-service%2Foauth%2Fexchange%2Fuser%2F2.0&audience%3DGARMIN_CONNECT_MOBILE_ANDROID_DI%26oauth_consumer_key%3Dtest-consumer-key%26oauth_nonce%3D4572616e48616d6d65724c61686176%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1700000000%26oauth_token%3Dtest-oauth-token%26oauth_version%3D1.0")
        XCTAssertEqual(s.signature, "NjwkjykvAb8hwG7SVNCoo1w9HiU=")
        XCTAssertEqual(
            s.authorizationHeader,
            "OAuth oauth_nonce=\"4572616e48616d6d65724c61686176\", oauth_timestamp=\"1700000000\", oauth_version=\"1.0\", oauth_signature_method=\"HMAC-SHA1\", oauth_consumer_key=\"test-consumer-key\", oauth_token=\"test-oauth-token\", oauth_signature=\"NjwkjykvAb8hwG7SVNCoo1w9HiU%3D\"")
    }

    func testV3RefreshExchangeEmptyBody() {
        let s = OAuth1Signer.sign(method: "POST", url: exchangeURL, consumer: consumer, token: token, nonce: nonce, timestamp: 1_700_000_000)
        XCTAssertEqual(s.signature, "5yxgn6Mwd49dZ8Q/Nhx4fZuyG9I=")
        XCTAssertTrue(s.authorizationHeader.contains("oauth_signature=\"5yxgn6Mwd49dZ8Q%2FNhx4fZuyG9I%3D\""))
    }

    func testV4MFATokenIsDoubleEncoded() {
        let body = "mfa_token=MFA-1571-abcDEF%2B%2F%3D-cas"
        let form = OAuth1Signer.decodeForm(body)
        XCTAssertEqual(form.first?.1, "MFA-1571-abcDEF+/=-cas")
        XCTAssertEqual(OAuth1Signer.encodeForm(form), body)
        let s = OAuth1Signer.sign(
            method: "POST", url: exchangeURL, formParameters: form, consumer: consumer, token: token, nonce: nonce,
            timestamp: 1_700_000_000)
        XCTAssertTrue(s.normalizedParameters.contains("mfa_token=MFA-1571-abcDEF%2B%2F%3D-cas"))
        XCTAssertTrue(s.baseString.contains("mfa_token%3DMFA-1571-abcDEF%252B%252F%253D-cas"))
        XCTAssertEqual(s.signature, "srhwkXc99Yx4mZ0jNYy5Dh7EeJ0=")
    }

    func testBaseURIRules() {
        XCTAssertEqual(OAuth1Signer.baseURI(URL(string: "HTTP://Example.COM:80/a/b?x=1#f")!), "http://example.com/a/b")
        XCTAssertEqual(OAuth1Signer.baseURI(URL(string: "https://example.com:443/p")!), "https://example.com/p")
        XCTAssertEqual(OAuth1Signer.baseURI(URL(string: "http://127.0.0.1:8080/p")!), "http://127.0.0.1:8080/p")
        XCTAssertEqual(OAuth1Signer.percentEncode("a b+c~é"), "a%20b%2Bc~%C3%A9")
    }

    func testNonceIsThirtyDigitsAndVaries() {
        let a = OAuth1Signer.makeNonce(), b = OAuth1Signer.makeNonce()
        XCTAssertEqual(a.count, 30)
        XCTAssertTrue(a.allSatisfy(\.isNumber))
        XCTAssertNotEqual(a, b)
    }
}
