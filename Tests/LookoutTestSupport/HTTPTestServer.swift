import Foundation
import Hummingbird
import Logging

/// A Hummingbird server on 127.0.0.1 with a port chosen by the system.
public final class HTTPTestServer: Sendable {
    /// The port it listens on.
    public let port: Int
    private let task: Task<Void, any Error>

    private init(port: Int, task: Task<Void, any Error>) {
        self.port = port
        self.task = task
    }

    /// Starts the server and returns once it listens.
    public static func start(router: Router<BasicRequestContext>) async throws -> HTTPTestServer {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "lookout.tests.http-server")
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            }, logger: logger)
        let task = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            throw POSIXError(.ECONNREFUSED)  // the test server did not start
        }
        return HTTPTestServer(port: port, task: task)
    }

    /// Stops the server and waits until it has.
    public func stop() async {
        task.cancel()
        _ = try? await task.value
    }
}
