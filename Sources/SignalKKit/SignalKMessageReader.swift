import Foundation
import LookoutWire
import NIOCore
import WSClient

/// Why the stream ended a connection itself: a server that breaks the bounds of a message.
/// The text is what `boat:state()` shows; it never contains a token.
public enum SignalKStreamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A message (the sum of its fragments, each frame counted with 2 bytes of framing) grew past
    /// `limit` bytes.
    case messageTooLarge(limit: Int)
    /// A fragmented message did not finish within `after`.
    case messageUnfinished(after: Duration)
    /// Frames out of order: a continuation without a message before it, or a new message before
    /// the last one finished.
    case protocolViolation(String)

    /// A human-readable explanation.
    public var description: String {
        switch self {
        case .messageTooLarge(let limit):
            return "the server sent a message larger than \(limit) bytes (its fragments together); connection closed"
        case .messageUnfinished(let after):
            let seconds = Double(after.components.seconds) + Double(after.components.attoseconds) / 1e18
            return "the server started a message and did not finish it within \(String(format: "%g", seconds)) s; connection closed"
        case .protocolViolation(let what): return "the server broke the WebSocket protocol (\(what)); connection closed"
        }
    }
}

/// Turns a socket's frames into whole text messages within two bounds a hostile server cannot
/// stretch: the size of a message is the sum of its fragments (each frame counted with 2 bytes of
/// framing, so endless empty fragments reach it too), and a message that has begun must finish
/// within `timeout`. The fragments are copied into one buffer as they arrive (no frame, and no
/// buffer a frame is a slice of, is kept). Binary messages are read and dropped.
struct SignalKMessageReader: Sendable {
    /// The largest message, in bytes.
    let maxSize: Int
    /// How long a begun message may take to finish.
    let timeout: Duration

    /// Calls `deliver` with each text message until the socket ends or `deliver` returns false.
    /// - Throws: ``SignalKStreamError`` when the server breaks a bound (the caller closes the
    ///   connection), or what the socket throws.
    func read(_ frames: WebSocketInboundStream, deliver: @escaping @Sendable (String) async -> Bool) async throws {
        let begun = Locked<ContinuousClock.Instant?>(nil)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await assemble(frames, begun: begun, deliver: deliver) }
            group.addTask { try await watch(begun) }
            defer { group.cancelAll() }
            _ = try await group.next()
        }
    }

    /// Reads frames into messages.
    private func assemble(_ frames: WebSocketInboundStream, begun: Locked<ContinuousClock.Instant?>,
                          deliver: @Sendable (String) async -> Bool) async throws {
        var buffer: ByteBuffer?
        var counted = 0
        var isText = false
        for try await frame in frames {
            switch frame.opcode {
            case .text, .binary:
                guard buffer == nil else { throw SignalKStreamError.protocolViolation("a new message inside an unfinished one") }
                isText = frame.opcode == .text
                counted = 0
                buffer = ByteBuffer()
                if !frame.fin { begun.withLock { $0 = .now } }
            case .continuation:
                guard buffer != nil else { throw SignalKStreamError.protocolViolation("a continuation without a message") }
            }
            counted += frame.data.readableBytes + 2
            guard counted <= maxSize + 2 else { throw SignalKStreamError.messageTooLarge(limit: maxSize) }
            var data = frame.data
            buffer!.writeBuffer(&data)
            guard frame.fin else { continue }
            let message = buffer!
            buffer = nil
            begun.withLock { $0 = nil }
            if isText, await !deliver(String(buffer: message)) { return }
        }
    }

    /// Throws ``SignalKStreamError/messageUnfinished(after:)`` once a begun message is older than
    /// `timeout` (looked at four times per `timeout`); runs until cancelled.
    private func watch(_ begun: Locked<ContinuousClock.Instant?>) async throws {
        let step = timeout / 4
        while true {
            try await Task.sleep(for: step)
            if let start = begun.withLock({ $0 }), ContinuousClock.now - start > timeout {
                throw SignalKStreamError.messageUnfinished(after: timeout)
            }
        }
    }
}
