import AsyncHTTPClient
import Foundation
import LookoutSim
import NIOCore
import NIOHTTP1
import XCTest
import LookoutWire

/// A response as the tests see it.
struct HTTPResult {
    var status: Int
    var headers: HTTPHeaders
    var body: Data
    var json: JSONValue? { try? JSONValue.parse(body) }
    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ n: String) -> String? { headers.first(name: n) }
}

/// A running simulator with a clock, a few subjects and request helpers.
final class SimHarness: @unchecked Sendable {
    static let secret = "this is my long pass phrase"
    static let secretHash = "b723e97aa97846eb92d5264f084b2823f57c4aa1"
    let clock = SimulatedClock(Date(timeIntervalSince1970: 1_714_557_600))
    let sim: NightscoutSimulator
    var base: URL!

    init(configure: (inout NightscoutSimulator.Options) -> Void = { _ in }) {
        var o = NightscoutSimulator.Options(apiSecret: Self.secret, authFailDelay: .zero)
        o.clock = clock.now
        configure(&o)
        sim = NightscoutSimulator(options: o)
    }

    func start() async throws {
        base = try await sim.start()
    }

    func stop() async { await sim.stop() }

    func request(
        _ method: HTTPMethod, _ path: String, headers: [(String, String)] = [], body: JSONValue? = nil,
        rawBody: String? = nil
    ) async throws -> HTTPResult {
        var req = HTTPClientRequest(url: base.absoluteString + path)
        req.method = method
        for (k, v) in headers { req.headers.add(name: k, value: v) }
        if let body {
            req.headers.add(name: "Content-Type", value: "application/json")
            req.body = .bytes(ByteBuffer(string: body.jsonString))
        } else if let rawBody {
            req.headers.add(name: "Content-Type", value: "application/json")
            req.body = .bytes(ByteBuffer(string: rawBody))
        }
        let resp = try await HTTPClient.shared.execute(req, timeout: .seconds(20))
        let buf = try await resp.body.collect(upTo: 50 * 1024 * 1024)
        return HTTPResult(status: Int(resp.status.code), headers: resp.headers, body: Data(buffer: buf))
    }

    /// Exchanges an access token for a JWT.
    func jwt(for token: String) async throws -> String {
        let r = try await request(.GET, "/api/v2/authorization/request/\(token)")
        XCTAssertEqual(r.status, 200, r.text)
        return r.json!["token"]!.stringValue!
    }

    /// A Bearer header for a new subject with `roles`.
    func bearer(_ name: String, roles: [String]) async throws -> [(String, String)] {
        let token = await sim.addSubject(name: name, roles: roles)
        return [("Authorization", "Bearer " + (try await jwt(for: token)))]
    }

    var secretHeader: [(String, String)] { [("api-secret", Self.secretHash)] }
}
