import Dispatch
import Foundation

/// Turns SIGINT and SIGTERM into calls on a queue instead of killing the process.
final class SignalWatcher: @unchecked Sendable {
    // @unchecked Sendable: `sources` never changes after init, and dispatch sources are
    // thread-safe objects.
    private let sources: [any DispatchSourceSignal]

    /// Calls `handler` with the signal number each time one arrives.
    init(signals: [Int32] = [SIGINT, SIGTERM], handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "lookout.signals")
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    /// Stops watching (signals get their default action back).
    func cancel() {
        for source in sources {
            source.cancel()
            signal(Int32(source.handle), SIG_DFL)
        }
    }
}
