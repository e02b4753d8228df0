import AsyncHTTPClient
import Foundation
import Hummingbird
@testable import LookoutSim
import NIOCore
import NIOHTTP1
import XCTest

/// The fault and request-log middleware on a router of their own (as any simulator adds them),
/// over HTTP on 127.0.0.1.
final class SimMiddlewareTests: XCTestCase {
    /// A server with the request log, the faults, its own 404 and one route `GET /things/{id}`.
    struct Server {
        let base: String
        let faults = SimFaults()
        let log = RequestLog()
        let running = RunState()

        init() async throws {
            let router = Router(context: SimRequestContext.self)
            router.add(middleware: RequestLogMiddleware(log: log, bodyLimit: 1 << 20))
            router.add(middleware: FaultMiddleware(faults: faults))
            router.add(middleware: SimNotFoundMiddleware(bodyLimit: 1 << 20) { req in .text(404, "no route \(req.path)") })
            SimRoutes(router: router, bodyLimit: 1 << 20).get("/things/{id}") { req in
                .json(200, ["id": .string(req.parameters["id"] ?? "")])
            }
            guard case .started(let port) = await SimServer.start(
                router.buildResponder(), port: 0, label: "SimMiddlewareTests", running: running)
            else { throw CancellationError() }
            base = "http://127.0.0.1:\(port)"
        }

        func stop() async { await SimServer.stop(running) }

        func request(_ method: HTTPMethod, _ path: String, body: String? = nil) async throws -> HTTPResult {
            var req = HTTPClientRequest(url: base + path)
            req.method = method
            if let body { req.body = .bytes(ByteBuffer(string: body)) }
            let resp = try await HTTPClient.shared.execute(req, timeout: .seconds(20))
            let buf = try await resp.body.collect(upTo: 1 << 20)
            return HTTPResult(status: Int(resp.status.code), headers: resp.headers, body: Data(buffer: buf))
        }
    }

    func testInjectedStatusAnswersInsteadOfTheRouteOnce() async throws {
        let server = try await Server()
        await server.faults.add(.init(fault: .status(503), remaining: 1, fraction: nil, pathPrefix: "/things"))
        let failed = try await server.request(.GET, "/things/a")
        XCTAssertEqual(failed.status, 503)
        XCTAssertEqual(failed.json, ["status": 503])
        let ok = try await server.request(.GET, "/things/a")
        XCTAssertEqual(ok.status, 200)
        XCTAssertEqual(ok.json, ["id": "a"])
        let injected = await server.faults.injectedCount
        XCTAssertEqual(injected, 1)
        await server.stop()
    }

    func testFaultOnlyUnderItsPathPrefixAndWithRetryAfter() async throws {
        let server = try await Server()
        await server.faults.add(.init(fault: .tooManyRequests(retryAfterSeconds: 7), remaining: 1, fraction: nil, pathPrefix: "/other"))
        let routed = try await server.request(.GET, "/things/b")
        XCTAssertEqual(routed.status, 200)
        let limited = try await server.request(.GET, "/other")
        XCTAssertEqual(limited.status, 429)
        XCTAssertEqual(limited.header("Retry-After"), "7")
        XCTAssertEqual(limited.json?["message"], "Too Many Requests")
        await server.stop()
    }

    func testTruncatedFaultCutsTheRoutesBody() async throws {
        let server = try await Server()
        await server.faults.add(.init(fault: .truncated, remaining: 1, fraction: nil, pathPrefix: nil))
        do {
            let cut = try await server.request(.GET, "/things/truncated-body")
            XCTFail("a truncated body arrived whole: \(cut.status) \(cut.text)")
        } catch {}
        let whole = try await server.request(.GET, "/things/c")
        XCTAssertEqual(whole.json, ["id": "c"])
        await server.stop()
    }

    func testRequestLogRecordsMethodPathQueryStatusAndIdentifier() async throws {
        let server = try await Server()
        await server.faults.add(.init(fault: .status(500), remaining: 1, fraction: nil, pathPrefix: "/things/x"))
        _ = try await server.request(.GET, "/things/x")
        _ = try await server.request(.GET, "/things/a%20b?limit=2")
        let missing = try await server.request(.POST, "/nowhere", body: #"{"identifier":"doc-1","v":1}"#)
        XCTAssertEqual(missing.text, "no route /nowhere")
        let records = await server.log.records
        XCTAssertEqual(records.map(\.method), ["GET", "GET", "POST"])
        XCTAssertEqual(records.map(\.path), ["/things/x", "/things/a%20b", "/nowhere"])
        XCTAssertEqual(records.map(\.status), [500, 200, 404])
        XCTAssertEqual(records.map(\.query), [nil, "limit=2", nil])
        XCTAssertEqual(records.map(\.identifier), [nil, nil, "doc-1"])
        await server.stop()
    }

    func testRouteParametersArePercentDecoded() async throws {
        let server = try await Server()
        let r = try await server.request(.GET, "/things/a%20b")
        XCTAssertEqual(r.json, ["id": "a b"])
        await server.stop()
    }
}
