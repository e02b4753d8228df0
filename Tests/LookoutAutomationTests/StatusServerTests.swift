import Foundation
import LookoutWire
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@testable import LookoutModules
@testable import LookoutAutomation
@testable import LookoutConfig

/// `StatusServer`: `GET /status` from the health registry, extra routes, loopback only.
final class StatusServerTests: XCTestCase {
    private func get(_ url: String, method: String = "GET", body: String? = nil) async throws -> (Int, String) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.timeoutInterval = 10
        if let body { request.httpBody = Data(body.utf8) }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    func testStatusAnswersTheRegistryAndExtraRoutes() async throws {
        let health = HealthRegistry()
        health.updateScript("alerts.lua") { entry in
            entry.state = .running
            entry.jobs = [HealthRegistry.Job(name: "check", kind: "every", spec: "5m", next: Date(timeIntervalSince1970: 1_800_000_000), runs: 3)]
        }
        health.updateComponent("signalk:boat", script: "bridge.lua") { entry in
            entry.connected = false
            entry.state = .failing
            entry.lastError = "connection refused"
            entry.outboxDepth = 4
        }
        let acked = Locked<[String]>([])
        let server = StatusServer(
            health: health, info: { ["pid": "42"] },
            extraRoutes: [
                StatusRoute(method: "POST", pathPrefix: "/ack/") { request in
                    let id = String(request.path.dropFirst("/ack/".count))
                    acked.withLock { $0.append(id + ":" + String(decoding: request.body, as: UTF8.self)) }
                    return .json(["acked": id])
                },
            ])
        let port = try await server.start(port: 0)
        let base = "http://127.0.0.1:\(port)"

        let (status, body) = try await get(base + "/status")
        XCTAssertEqual(status, 200)
        let document = try HealthDocument.decode(Data(body.utf8))
        XCTAssertEqual(document.info["pid"], "42")
        XCTAssertEqual(document.entries.map { $0.name }, ["alerts.lua", "signalk:boat"])
        XCTAssertEqual(document.entries[0].jobs.first?.runs, 3)
        XCTAssertEqual(document.entries[1].connected, false)
        XCTAssertEqual(document.entries[1].outboxDepth, 4)
        XCTAssertTrue(body.contains(#""last_error":"connection refused""#), body)

        let (ackStatus, ackBody) = try await get(base + "/ack/urgent-low", method: "POST", body: "by=anna")
        XCTAssertEqual(ackStatus, 200)
        XCTAssertEqual(ackBody, #"{"acked":"urgent-low"}"#)
        XCTAssertEqual(acked.withLock { $0 }, ["urgent-low:by=anna"])
        let (missing, text) = try await get(base + "/nothing")
        XCTAssertEqual(missing, 404)
        XCTAssertTrue(text.contains("not found: GET /nothing"))
        let (wrongMethod, _) = try await get(base + "/status", method: "POST")
        XCTAssertEqual(wrongMethod, 405)
        await server.stop()
    }
}
