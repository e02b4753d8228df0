import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns SIGINT and SIGTERM into calls on a thread of their own instead of killing the process.
///
/// The handler is installed with `sigaction` before `init` returns, so no signal is lost between
/// start-up and the first script line (a dispatch signal source arms asynchronously and lost the
/// signal a test sent right after the script printed). The handler only writes the signal number
/// to a pipe, which is async-signal-safe; a thread reads the pipe and calls the Swift handler.
final class SignalWatcher: @unchecked Sendable {
    // @unchecked Sendable: `signals` never changes after init; the pipe's file descriptors are
    // plain integers shared with the signal handler.
    private let signals: [Int32]

    /// Calls `handler` with the signal number each time one arrives.
    init(signals: [Int32] = [SIGINT, SIGTERM], handler: @escaping @Sendable (Int32) -> Void) {
        self.signals = signals
        var fds: [Int32] = [0, 0]
        _ = pipe(&fds)
        signalWriteDescriptor = fds[1]
        let readDescriptor = fds[0]
        let thread = Thread {
            var byte: UInt8 = 0
            while read(readDescriptor, &byte, 1) == 1 {
                if byte == 0 { break }
                handler(Int32(byte))
            }
        }
        thread.name = "lookout: signals"
        thread.start()
        for number in signals {
            var action = sigaction()
            #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = forwardSignal
            #else
            action.__sigaction_u.__sa_handler = forwardSignal
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
    }

    /// Stops watching (signals get their default action back).
    func cancel() {
        for number in signals { signal(number, SIG_DFL) }
        var stop: UInt8 = 0
        _ = write(signalWriteDescriptor, &stop, 1)
    }
}

/// The write end of the signal pipe (read by the signal handler, which may only use plain values).
nonisolated(unsafe) private var signalWriteDescriptor: Int32 = -1

private let forwardSignal: @convention(c) (Int32) -> Void = { number in
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(signalWriteDescriptor, &byte, 1)
}
