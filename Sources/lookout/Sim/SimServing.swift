import Foundation
import Lua

/// What every `lookout sim …` command does once its server runs.
enum SimServing {
    /// Says "serving until Ctrl-C" and returns when SIGINT or SIGTERM arrives.
    static func untilInterrupted() async {
        FileHandleOutput.standardOutput.write("serving until Ctrl-C\n")
        let stopped = AsyncStream<Void>.makeStream()
        let signals = SignalWatcher { _ in stopped.continuation.finish() }
        for await _ in stopped.stream {}
        signals.cancel()
    }
}
