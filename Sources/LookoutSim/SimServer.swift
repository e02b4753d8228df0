import Foundation
import Hummingbird
import Logging

/// Starting and stopping a simulator's Hummingbird server on 127.0.0.1 (shared by the simulators).
enum SimServer {
    /// How a start ended.
    enum Outcome {
        /// Listening on this port.
        case port(Int)
        /// The simulator was already running.
        case alreadyRunning
        /// The server stopped before it reported its port.
        case didNotStart
    }

    /// Runs `responder` on 127.0.0.1:`port` (0: any free port) in a task kept in `running`.
    static func start<R: HTTPResponder>(_ responder: R, port: Int, label: String, running: RunState) async -> Outcome
    where R.Context == SimRequestContext {
        let (portStream, portCont) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: label)
        logger.logLevel = .critical
        let app = Application(
            responder: responder,
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: nil),
            onServerRunning: { channel in
                portCont.yield(channel.localAddress?.port ?? 0)
                portCont.finish()
            },
            logger: logger)
        let task = Task {
            defer { portCont.finish() }
            try await app.run()
        }
        guard await running.set(task) else {
            task.cancel()
            return .alreadyRunning
        }
        var it = portStream.makeAsyncIterator()
        guard let port = await it.next(), port > 0 else {
            _ = try? await task.value
            await running.clear()
            return .didNotStart
        }
        return .port(port)
    }

    /// Stops the server and waits until it has shut down.
    static func stop(_ running: RunState) async {
        guard let task = await running.clear() else { return }
        task.cancel()
        _ = try? await task.value
    }
}

extension SimRequest {
    /// Reads a Hummingbird request (body up to `limit` bytes) into a `SimRequest`.
    static func collect(_ request: Request, context: SimRequestContext, limit: Int) async throws -> SimRequest {
        var request = request
        let body = try await request.collectBody(upTo: limit)
        var headers: [String: String] = [:]
        for f in request.headers { headers[f.name.canonicalName.lowercased()] = f.value }
        let path = request.uri.path
        let segs = path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        return SimRequest(
            method: request.method.rawValue, path: path, segments: segs,
            query: SimRequest.parseQuery(request.uri.query), headers: headers, body: Data(buffer: body),
            client: context.client)
    }
}
