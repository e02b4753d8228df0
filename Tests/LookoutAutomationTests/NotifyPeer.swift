import Foundation
import LookoutWire
import LookoutTestSupport
import HTTPTypes
import Hummingbird
import NIOCore

@testable import LookoutModules
@testable import LookoutConfig

/// A local stand-in for webhook, ntfy, Pushover and Telegram: records every request and answers
/// with the status set for its path (default 200). One server for the test process, never
/// stopped (stopping while a connection arrives can trap in NIO); tests keep apart by path.
final class NotifyPeer: Sendable {
    /// One recorded request.
    struct Request: Sendable {
        var method: String
        var path: String
        var headers: [String: String]
        var body: String
    }

    private let recorded = Locked<[Request]>([])
    private let statuses = Locked<[String: Int]>([:])

    private static let shared = Task { () throws -> (NotifyPeer, HTTPTestServer) in
        let peer = NotifyPeer()
        let server = try await HTTPTestServer.start(router: peer.router())
        return (peer, server)
    }

    /// The peer and its base URL.
    static func get() async throws -> (NotifyPeer, String) {
        let (peer, server) = try await shared.value
        return (peer, "http://127.0.0.1:\(server.port)")
    }

    /// Requests whose path starts with `prefix`.
    func requests(_ prefix: String) -> [Request] { recorded.withLock { $0.filter { $0.path.hasPrefix(prefix) } } }

    /// Answers `status` for paths starting with `prefix` from now on.
    func answer(_ status: Int, for prefix: String) { statuses.withLock { $0[prefix] = status } }

    private func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.on("**", method: .post) { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let path = request.uri.path
            self.recorded.withLock {
                $0.append(Request(method: request.method.rawValue, path: path, headers: headers, body: String(buffer: body)))
            }
            let status = self.statuses.withLock { s in s.first { path.hasPrefix($0.key) }?.value } ?? 200
            return Response(status: .init(code: status), body: .init(byteBuffer: ByteBuffer(string: status == 200 ? "{\"ok\":true}" : "{\"ok\":false}")))
        }
        return router
    }
}
