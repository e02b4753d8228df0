import Foundation
@testable import NightscoutKit
import LookoutWire
import XCTest

/// Records requests and answers from a fixed function (no network).
final class RecordingTransport: @unchecked Sendable {
    private let lock = NSLock()
    private var _requests: [NightscoutRequest] = []
    let answer: @Sendable (NightscoutRequest) -> NightscoutHTTPResponse

    init(answer: @escaping @Sendable (NightscoutRequest) -> NightscoutHTTPResponse) { self.answer = answer }

    var requests: [NightscoutRequest] { lock.withLock { _requests } }

    var transport: NightscoutTransport {
        NightscoutTransport { [self] request, _ in
            lock.withLock { _requests.append(request) }
            return answer(request)
        }
    }
}

final class ClientTransportTests: XCTestCase {
    private func client(_ credentials: NightscoutCredentials, _ t: RecordingTransport) throws -> NightscoutClient {
        NightscoutClient(configuration: try NightscoutConfiguration(site: "https://ns.example", credentials: credentials),
                         transport: t.transport)
    }

    func testV1AndV3AuthenticationHeaders() async throws {
        let t = RecordingTransport { req in
            if req.url.path.hasPrefix("/api/v3") {
                return NightscoutHTTPResponse(status: 200, body: Data(#"{"status":200,"result":[]}"#.utf8))
            }
            return NightscoutHTTPResponse(status: 200, body: Data("[]".utf8))
        }
        let secret = try client(.apiSecret("this is my long pass phrase"), t)
        _ = try await secret.entries(try .entries(from: Date(timeIntervalSince1970: 0), count: 5))
        XCTAssertEqual(t.requests.last?.header("api-secret"), "b723e97aa97846eb92d5264f084b2823f57c4aa1")
        XCTAssertNil(t.requests.last?.header("Authorization"))

        let jwt = try client(.jwt("a.b.c"), t)
        _ = try await jwt.search(Entry.self, try V3Search(collection: .entries, limit: 5))
        XCTAssertEqual(t.requests.last?.header("Authorization"), "Bearer a.b.c")
        XCTAssertNil(t.requests.last?.header("api-secret"))
    }

    func testV3UnauthorizedWithFixedJWTIsNotRetriedAndNotLeaked() async throws {
        let t = RecordingTransport { _ in
            NightscoutHTTPResponse(status: 401, body: Data(#"{"status":401,"message":"Bad access token or JWT"}"#.utf8))
        }
        let c = try client(.jwt("secret.jwt.value"), t)
        do {
            _ = try await c.v3Status()
            XCTFail("expected 401")
        } catch let error as NightscoutError {
            XCTAssertEqual(error, .unauthorized(message: "Bad access token or JWT"))
            XCTAssertFalse(error.description.contains("secret.jwt.value"))
        }
        XCTAssertEqual(t.requests.count, 1)
    }

    func testServiceUnavailableWithHTTPDateRetryAfter() async throws {
        let when = HTTPDate.format(Date().addingTimeInterval(120))
        let t = RecordingTransport { _ in
            NightscoutHTTPResponse(status: 503, headers: ["retry-after": when], body: Data(#"{"status":503}"#.utf8))
        }
        let c = try client(.apiSecret("this is my long pass phrase"), t)
        do {
            _ = try await c.status()
            XCTFail("expected 503")
        } catch let error as NightscoutError {
            XCTAssertEqual(error.status, 503)
            XCTAssertTrue(error.isRetryable)
            let after = try XCTUnwrap(error.retryAfter)
            XCTAssertTrue((100...121).contains(after), "\(after)")
        }
    }

    func testHistoryStopsWhenAFullPageMakesNoProgress() async throws {
        // Every page returns the same two documents at one millisecond: the cursor accepts them
        // once, and the second request (from watermark − 1) brings nothing new.
        let body = #"{"status":200,"result":[{"identifier":"a","srvModified":1714557600000,"date":1714557600000},"#
            + #"{"identifier":"b","srvModified":1714557600000,"date":1714557600000}]}"#
        let t = RecordingTransport { _ in NightscoutHTTPResponse(status: 200, body: Data(body.utf8)) }
        let c = try client(.jwt("a.b.c"), t)
        var docs: [Entry] = []
        for try await page in c.history(Entry.self, .entries, limit: 2) { docs += page.documents }
        XCTAssertEqual(docs.compactMap(\.common.identifier), ["a", "b"])
        XCTAssertEqual(t.requests.count, 2)
        XCTAssertTrue(t.requests[1].url.path.hasSuffix("/history/1714557599999"))
    }

    func testTransportFailureDuringExchangeDoesNotLeakAccessToken() async throws {
        let token = "kitleak-0123456789abcdef"
        let config = try NightscoutConfiguration(site: "http://127.0.0.1:1", credentials: .accessToken(token))
        let c = NightscoutClient(configuration: config, timeout: 1)
        do {
            _ = try await c.v3Status()
            XCTFail("expected a transport error")
        } catch let error as NightscoutError {
            guard case .transport = error else { return XCTFail("\(error)") }
            XCTAssertFalse(error.description.contains(token), error.description)
            XCTAssertTrue(error.description.contains("<redacted>"), error.description)
        }
    }
}
