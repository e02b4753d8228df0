import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@testable import LookoutAutomation
@testable import LookoutConfig
@testable import LookoutModules

/// `StatusServer` on Hummingbird's Router: extra routes by path prefix (the longest matching
/// prefix wins), methods, `/status` answering only GET/HEAD.
final class StatusServerRouteTests: XCTestCase {
    private func send(_ url: String, method: String = "GET") async throws -> (Int, String) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.timeoutInterval = 10
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    private func route(_ method: String, _ prefix: String) -> StatusRoute {
        StatusRoute(method: method, pathPrefix: prefix) { request in .text("\(prefix) \(request.path)") }
    }

    func testExtraRoutesMatchTheLongestPrefix() async throws {
        let server = StatusServer(
            health: HealthRegistry(),
            extraRoutes: [route("POST", "/ack/"), route("POST", "/ack/urgent/"), route("GET", "/hook")])
        let port = try await server.start(port: 0)
        let base = "http://127.0.0.1:\(port)"
        let cases: [(String, String, Int, String)] = [
            ("POST", "/ack/a", 200, "/ack/ /ack/a\n"),
            ("POST", "/ack/", 200, "/ack/ /ack/\n"),
            ("POST", "/ack/urgent/x/y", 200, "/ack/urgent/ /ack/urgent/x/y\n"),
            ("POST", "/ack/urgent", 200, "/ack/ /ack/urgent\n"),
            ("GET", "/hooks/1", 200, "/hook /hooks/1\n"),
            ("GET", "/hook", 200, "/hook /hook\n"),
        ]
        for (method, path, status, body) in cases {
            let (got, text) = try await send(base + path, method: method)
            XCTAssertEqual(got, status, "\(method) \(path)")
            XCTAssertEqual(text, body, "\(method) \(path)")
        }
        for (method, path) in [("POST", "/ack"), ("GET", "/ack/a"), ("GET", "/ho"), ("DELETE", "/hook")] {
            let (got, text) = try await send(base + path, method: method)
            XCTAssertEqual(got, 404, "\(method) \(path)")
            XCTAssertEqual(text, "not found: \(method) \(path) (try GET /status)\n")
        }
        let (head, _) = try await send(base + "/status", method: "HEAD")
        XCTAssertEqual(head, 200)
        let (put, text) = try await send(base + "/status/", method: "PUT")
        XCTAssertEqual(put, 405)
        XCTAssertEqual(text, "use GET /status\n")
        await server.stop()
    }
}
