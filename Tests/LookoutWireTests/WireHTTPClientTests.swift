import Foundation
import LookoutWire
@testable import LookoutWire
import XCTest

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

final class WireHTTPClientTests: XCTestCase {
    /// A loopback port nothing listens on: bound, read back and closed again.
    private func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        XCTAssertTrue(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A refused connection fails as refused (not retried until a timeout: the connect timeout
    /// here is far longer than the request's), and its text names the URL without its secrets.
    func testRefusedConnectionFailsAtOnceNamingTheURLWithoutSecrets() async throws {
        let port = try closedPort()
        let client = WireHTTPClient(client: WireHTTPClient.makeClient(connectTimeout: .seconds(60)))
        let url = try XCTUnwrap(URL(string: "http://alice:hunter22@127.0.0.1:\(port)/api/v2/authorization/request/tok-secret-1?token=qsecret99&x=1"))
        let request = WireHTTPRequest(method: "GET", url: url, headers: [("api-secret", "hdrsecret77")])
        do {
            _ = try await client.send(request, timeout: .seconds(30), maximumBodyBytes: 1024)
            XCTFail("a closed port answered")
        } catch let error as WireHTTPError {
            XCTAssertEqual(error.kind, .connectionRefused, "\(error)")
            XCTAssertEqual(error.description, "GET /api/v2/authorization/request/<redacted>: connection refused by http://127.0.0.1:\(port): "
                           + "nothing listens there (is the server running, and are host and port right?)")
            for secret in ["alice", "hunter22", "tok-secret-1", "qsecret99", "hdrsecret77"] {
                XCTAssertFalse(error.description.contains(secret), error.description)
                XCTAssertFalse(error.url.contains(secret), error.url)
            }
        }
        try await client.client.shutdown()
    }

    /// An unanswered connection fails after the shared client's connect timeout of a few seconds
    /// (not the request's 30 s), as "connect … timed out" naming the server and what to check.
    func testConnectTimeoutIsShortAndSaysWhatToCheck() throws {
        XCTAssertEqual(WireHTTPClient.defaultConnectTimeout, .seconds(5))
        let url = try XCTUnwrap(URL(string: "https://user:pw-secret@ns.example:8443/api/v3/version?token=qs-secret"))
        let error = WireHTTPError(.connectTimedOut, WireHTTPRequest(method: "GET", url: url))
        XCTAssertEqual(error.description, "GET /api/v3/version: connect to https://ns.example:8443 timed out: no answer "
                       + "(is the host up and reachable from here, and are host and port right?)")
        XCTAssertEqual(WireHTTPError(.timedOut, WireHTTPRequest(method: "GET", url: url)).reason,
                       "timed out waiting for https://ns.example:8443 to answer")
    }

    func testRedaction() throws {
        let url = try XCTUnwrap(URL(string: "https://bob:pw-123456@ns.example:8443/api/v2/authorization/request/abc-token?secret=s3cr3t#frag"))
        XCTAssertEqual(Redaction.url(url), "https://ns.example:8443/api/v2/authorization/request/<redacted>")
        XCTAssertEqual(Redaction.path("/api/v1/entries.json"), "/api/v1/entries.json")
        let text = "failed for https://bob:pw-123456@ns.example:8443/api/v2/authorization/request/abc-token?secret=s3cr3t"
        let scrubbed = Redaction.scrub(text, of: url)
        for secret in ["pw-123456", "abc-token", "s3cr3t"] { XCTAssertFalse(scrubbed.contains(secret), scrubbed) }
    }

    func testOrigins() throws {
        let a = try XCTUnwrap(URL(string: "HTTP://Example.org/a"))
        XCTAssertEqual(HTTPOrigin.of(a), "http://example.org:80")
        XCTAssertTrue(HTTPOrigin.same(a, try XCTUnwrap(URL(string: "http://example.org:80/b?c"))))
        XCTAssertFalse(HTTPOrigin.same(a, try XCTUnwrap(URL(string: "https://example.org/a"))))
        XCTAssertFalse(HTTPOrigin.same(a, try XCTUnwrap(URL(string: "http://example.org:8080/a"))))
    }

    /// Same-origin redirects are followed (303 becomes GET without body); others refused.
    func testRedirectRules() throws {
        let request = WireHTTPRequest(method: "POST", url: try XCTUnwrap(URL(string: "http://h:1/a")),
                                      headers: [("Content-Type", "application/json"), ("api-secret", "x")], body: Data("{}".utf8))
        let next = try XCTUnwrap(WireHTTPClient.redirect(from: request, WireHTTPResponse(status: 303, headers: [("Location", "/b")])))
        XCTAssertEqual(next.url.absoluteString, "http://h:1/b")
        XCTAssertEqual(next.method, "GET")
        XCTAssertNil(next.body)
        XCTAssertEqual(next.headers.map(\.name), ["api-secret"])
        let kept = try XCTUnwrap(WireHTTPClient.redirect(from: request, WireHTTPResponse(status: 307, headers: [("location", "http://h:1/c")])))
        XCTAssertEqual(kept.method, "POST")
        XCTAssertNil(try WireHTTPClient.redirect(from: request, WireHTTPResponse(status: 200, headers: [("location", "/b")])))
        XCTAssertThrowsError(try WireHTTPClient.redirect(from: request, WireHTTPResponse(status: 302, headers: [("location", "http://evil:1/")]))) {
            XCTAssertEqual(($0 as? WireHTTPError)?.kind, .crossOriginRedirect(targetOrigin: "http://evil:1"))
        }
    }

    func testRetryPolicyDelays() {
        let policy = RetryPolicy(initialDelay: 2, maximumDelay: 60, multiplier: 2, jitter: 0.2)
        XCTAssertEqual(policy.delay(afterAttempts: 1, retryAfter: nil, random: 0.5), 2)
        XCTAssertEqual(policy.delay(afterAttempts: 3, retryAfter: nil, random: 0.5), 8)
        XCTAssertEqual(policy.delay(afterAttempts: 30, retryAfter: nil, random: 0.5), 60)
        XCTAssertEqual(policy.delay(afterAttempts: 1, retryAfter: 30, random: 0.5), 30)
        XCTAssertEqual(policy.delay(afterAttempts: 1, retryAfter: nil, random: 0), 1.6, accuracy: 1e-9)
    }
}
