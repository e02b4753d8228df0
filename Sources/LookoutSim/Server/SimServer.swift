import Foundation
import Hummingbird
import Logging

/// Runs a simulator's HTTP responder on 127.0.0.1 in a task kept by `RunState`.
enum SimServer {
    /// How starting went.
    enum Start {
        /// Listening on this port.
        case started(port: Int)
        /// `running` already had a server.
        case alreadyRunning
        /// The server stopped before it reported its port.
        case didNotStart
    }

    /// Starts `responder` on `port` (0: any free one) and waits until it listens. Logs only
    /// critical messages under `label`.
    static func start<R: HTTPResponder>(_ responder: R, port: Int, label: String, running: RunState) async -> Start
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
        guard let bound = await it.next(), bound > 0 else {
            _ = try? await task.value
            await running.clear()
            return .didNotStart
        }
        return .started(port: bound)
    }

    /// `start`, throwing the simulator's own errors; returns the port.
    static func start<R: HTTPResponder, E: Error>(_ responder: R, port: Int, label: String, running: RunState,
                                                  alreadyRunning: E, didNotStart: E) async throws(E) -> Int
    where R.Context == SimRequestContext {
        switch await start(responder, port: port, label: label, running: running) {
        case .started(let bound): return bound
        case .alreadyRunning: throw alreadyRunning
        case .didNotStart: throw didNotStart
        }
    }

    /// Stops the server kept by `running` and waits until it has shut down.
    static func stop(_ running: RunState) async {
        guard let task = await running.clear() else { return }
        task.cancel()
        _ = try? await task.value
    }
}
