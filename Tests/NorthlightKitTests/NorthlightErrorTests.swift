import Foundation
import LookoutSim
#if canImport(Glibc)
import Glibc
#endif
import NorthlightKit
import XCTest

/// Every error of the seed against the simulator, and validation before sending.
final class NorthlightErrorTests: XCTestCase {
    private var site: NorthlightKitSim.Running!

    override func setUp() async throws { site = try await NorthlightKitSim.shared.start() }

    private func client(_ tier: NorthlightSimulator.Tier = .starter, key: String? = nil) async throws -> NorthlightClient {
        let apiKey: String
        if let key { apiKey = key } else { apiKey = await site.sim.addProject(tier: tier) }
        return NorthlightClient(configuration: try NorthlightConfiguration(apiKey: apiKey, baseURL: site.url), deviceInfo: { fixedDevice })
    }

    func testValidationNamesTheFieldAndSendsNothing() async throws {
        let northlight = try await client()
        let before = await site.sim.requests().count
        await assertThrows(.invalidInput("title: required")) { try await northlight.submitFeedback(title: "  ", description: "d") }
        await assertThrows(.invalidInput("title: at most 255 characters (got 256)")) {
            try await northlight.submitFeedback(title: String(repeating: "é", count: 256), description: "d")
        }
        // 255 characters are fine:
        _ = try await northlight.prepareFeedback(title: String(repeating: "é", count: 255), description: "d")
        await assertThrows(.invalidInput("description: required")) { try await northlight.reportBug(title: "t", description: "\n") }
        await assertThrows(.invalidInput("email: not a valid address")) {
            try await northlight.submitFeedback(title: "t", description: "d", email: "not an email")
        }
        await assertThrows(.invalidInput("email: not a valid address")) { try await northlight.setUserEmail("a@b") }
        XCTAssertThrowsError(try NorthlightSeverity.parse("urgent")) { error in
            XCTAssertEqual((error as? NorthlightError)?.field, "severity")
        }
        XCTAssertEqual(try NorthlightSeverity.parse("HIGH"), .high)
        let after = await site.sim.requests().count
        XCTAssertEqual(after, before, "nothing was sent")
    }

    func testServerSideValidationIsReportedWithItsField() async throws {
        // A hand-made body the client would never build: the simulator names the field.
        let northlight = try await client()
        let body = Data(#"{"title":"t","description":"d","severity":"urgent"}"#.utf8)
        await assertThrows(.invalidInput("severity: severity must be low, medium, high or critical")) {
            try await northlight.send(NorthlightSubmission(kind: .bug, body: body))
        }
        let noTitle = Data(#"{"description":"d"}"#.utf8)
        await assertThrows(.invalidInput("title: title is required")) {
            try await northlight.send(NorthlightSubmission(kind: .feedback, body: noTitle))
        }
    }

    func testInvalidAPIKey() async throws {
        let northlight = try await client(key: "nl_unknown_key")
        await assertThrows(.invalidAPIKey) { try await northlight.roadmap() }
        XCTAssertThrowsError(try NorthlightConfiguration(apiKey: " ", baseURL: site.url)) {
            XCTAssertEqual($0 as? NorthlightError, .invalidAPIKey)
        }
        XCTAssertThrowsError(try NorthlightConfiguration(apiKey: "a\nb", baseURL: site.url))
    }

    func testRateLimitGivesRetryAfterAndTheWindowReopens() async throws {
        let northlight = try await client(.growth)  // 3 requests a minute in these tests
        for _ in 0..<3 { _ = try await northlight.roadmap(refresh: true) }
        do {
            _ = try await northlight.roadmap(refresh: true)
            XCTFail("expected a rate limit")
        } catch {
            guard case .rateLimitExceeded(let after) = error else { return XCTFail("\(error)") }
            let wait = try XCTUnwrap(after)
            XCTAssertTrue(wait >= 1 && wait <= 60, "\(wait)")
            XCTAssertTrue(error.isRetryable)
            XCTAssertEqual(error.status, 429)
        }
        NorthlightKitSim.clock.advance(by: 61)
        let roadmap = try await northlight.roadmap(refresh: true)
        XCTAssertEqual(roadmap.count, 3)
    }

    func testFreeTierFeedbackLimit() async throws {
        let northlight = try await client(.free)
        for i in 0..<5 {
            if i % 2 == 0 {
                _ = try await northlight.submitFeedback(title: "item \(i)", description: "d")
            } else {
                _ = try await northlight.reportBug(title: "bug \(i)", description: "d")
            }
        }
        await assertThrows(.feedbackLimitReached) { try await northlight.submitFeedback(title: "sixth", description: "d") }
        await assertThrows(.feedbackLimitReached) { try await northlight.reportBug(title: "sixth", description: "d") }
        XCTAssertFalse(NorthlightError.feedbackLimitReached.isRetryable)
        let board = try await northlight.publicFeedback()
        XCTAssertEqual(board.count, 6, "3 sample items and 3 submitted")
    }

    func testServerErrorsAndNetworkErrors() async throws {
        let northlight = try await client()
        await site.sim.injectFailures(status: 503, count: 1)
        await assertThrows(.serverError(statusCode: 503)) { try await northlight.submitFeedback(title: "t", description: "d") }
        XCTAssertTrue(NorthlightError.serverError(statusCode: 503).isRetryable)
        XCTAssertFalse(NorthlightError.serverError(statusCode: 404).isRetryable)
        _ = try await northlight.submitFeedback(title: "t", description: "d")

        // A port nobody listens on: bind one, note it, close it.
        let closed = try NorthlightConfiguration(apiKey: "k", baseURL: URL(string: "http://127.0.0.1:\(try freePort())/api/v1")!, timeout: 5)
        let offline = NorthlightClient(configuration: closed, deviceInfo: { fixedDevice })
        do {
            _ = try await offline.submitFeedback(title: "t", description: "d")
            XCTFail("expected a network error")
        } catch {
            guard case .networkError(let text) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(text.hasPrefix("POST /api/v1/feedback: "), text)
            XCTAssertTrue(error.isRetryable)
        }
    }

    func testRedirectsAreNotFollowedWithTheKey() async throws {
        let key = await site.sim.addProject(tier: .starter)
        let northlight = NorthlightClient(configuration: try NorthlightConfiguration(apiKey: key, baseURL: site.url),
                                          deviceInfo: { fixedDevice })
        await site.sim.injectRedirect(to: site.url.absoluteString + "/roadmap?stolen=1")
        await assertThrows(.serverError(statusCode: 307)) { try await northlight.submitFeedback(title: "t", description: "d") }
        let followed = await site.sim.requests().filter { $0.target.contains("stolen") }
        XCTAssertEqual(followed.count, 0, "the redirect was not followed")
    }

    func testUndecodableAnswerIsInvalidResponse() async throws {
        let transport = NorthlightTransport { _, _ in NorthlightHTTPResponse(status: 200, headers: [:], body: Data("<html>".utf8)) }
        let northlight = NorthlightClient(configuration: try NorthlightConfiguration(apiKey: "k"), transport: transport,
                                          deviceInfo: { fixedDevice })
        do {
            _ = try await northlight.roadmap()
            XCTFail("expected invalidResponse")
        } catch {
            guard case .invalidResponse = error else { return XCTFail("\(error)") }
        }
        await assertThrows(.invalidResponse("expected {\"feedback_id\": …} from POST /feedback")) {
            try await northlight.submitFeedback(title: "t", description: "d")
        }
    }

    func testRetryAfterAsHTTPDate() async throws {
        let date = Date().addingTimeInterval(120)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let header = formatter.string(from: date)
        let transport = NorthlightTransport { _, _ in NorthlightHTTPResponse(status: 429, headers: ["retry-after": header], body: Data()) }
        let northlight = NorthlightClient(configuration: try NorthlightConfiguration(apiKey: "k"), transport: transport,
                                          deviceInfo: { fixedDevice })
        do {
            _ = try await northlight.roadmap()
            XCTFail("expected a rate limit")
        } catch {
            guard case .rateLimitExceeded(let after?) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(after, 120, accuracy: 2)
        }
    }
}

/// A TCP port that was free a moment ago (bound, then closed).
func freePort() throws -> Int {
    #if canImport(Glibc)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw NorthlightError.networkError("cannot bind a probe socket") }
    return Int(UInt16(bigEndian: address.sin_port))
}
