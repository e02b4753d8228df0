import Foundation
import LookoutWire
import LookoutTestSupport
import HTTPTypes
import Hummingbird
import NIOCore

@testable import LookoutModules
@testable import LookoutConfig

/// A server of the tests' own on 127.0.0.1, standing for an attacker's server or a site that
/// redirects: records every request (any method, any path) and answers 200, or 307 for paths
/// under a prefix given to ``redirect(_:to:)``. Two per test process (``attacker``,
/// ``redirector``: different ports, so different origins), never stopped; tests keep apart by path.
final class CaptureServer: Sendable {
    /// One recorded request.
    struct Request: Sendable {
        var method: String
        var path: String
        var query: String
        var headers: [String: String]
        var body: String

        /// Everything the request carried, for "does it contain the secret" checks.
        var everything: String { ([method, path, query, body] + headers.map { "\($0.key): \($0.value)" }).joined(separator: "\n") }
    }

    private let recorded = Locked<[Request]>([])
    private let redirects = Locked<[String: String]>([:])
    private let portBox = Locked<Int>(0)

    private static func start() -> Task<CaptureServer, any Error> {
        Task {
            let server = CaptureServer()
            let http = try await HTTPTestServer.start(router: server.router())
            server.portBox.withLock { $0 = http.port }
            return server
        }
    }

    private static let attackerTask = start()
    private static let redirectorTask = start()

    /// The stand-in for a server of the attacker's.
    static func attacker() async throws -> CaptureServer { try await attackerTask.value }
    /// The stand-in for a site that redirects (another origin than ``attacker()``).
    static func redirector() async throws -> CaptureServer { try await redirectorTask.value }

    /// `http://127.0.0.1:PORT`.
    var base: String { "http://127.0.0.1:\(portBox.withLock { $0 })" }

    /// Requests whose path starts with `prefix`.
    func requests(_ prefix: String = "/") -> [Request] { recorded.withLock { $0.filter { $0.path.hasPrefix(prefix) } } }

    /// From now on, answers requests under `prefix` with 307 to `target` followed by the rest of
    /// the path and the query.
    func redirect(_ prefix: String, to target: String) { redirects.withLock { $0[prefix] = target } }

    private func router() -> Router<BasicRequestContext> {
        let router = Router()
        for method in [HTTPRequest.Method.get, .post, .put, .delete, .patch] {
            router.on("**", method: method) { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                var headers: [String: String] = [:]
                for field in request.headers { headers[field.name.canonicalName] = field.value }
                let path = request.uri.path, query = request.uri.query ?? ""
                self.recorded.withLock {
                    $0.append(Request(method: request.method.rawValue, path: path, query: query, headers: headers, body: String(buffer: body)))
                }
                if let (prefix, target) = self.redirects.withLock({ r in r.first { path.hasPrefix($0.key) } }) {
                    let location = target + path.dropFirst(prefix.count) + (query.isEmpty ? "" : "?" + query)
                    return Response(status: .temporaryRedirect, headers: [.location: location])
                }
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "[]")))
            }
        }
        return router
    }
}
