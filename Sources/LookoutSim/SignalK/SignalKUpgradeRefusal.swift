import NIOCore
import NIOHTTP1

/// Turns Hummingbird's answer to a refused WebSocket upgrade (always `400 Bad Request` with an
/// empty body) into signalk-server's answer to a bad token at the upgrade (§3.2): `401` with
/// `{"error":"bad auth token"}`, as Primus writes it (`transformer.js`: status 401, JSON `error`).
///
/// The simulator's upgrade check adds one to the connection's pipeline just before it refuses the
/// upgrade for a bad token, so only that connection's one answer is rewritten (the connection
/// closes after it). It sits between Hummingbird's HTTP codec and NIO's response encoder and sees
/// NIO's response parts.
final class SignalKUpgradeRefusal: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    static let body = #"{"error":"bad auth token"}"#
    private var rewrote = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        guard !rewrote, case .head(var head) = part, head.status == .badRequest else {
            context.write(data, promise: promise)
            return
        }
        rewrote = true
        head.status = .unauthorized
        let body = context.channel.allocator.buffer(string: Self.body)
        head.headers.replaceOrAdd(name: "Content-Type", value: "application/json")
        head.headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes))
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: promise)
    }

    /// Adds a refusal rewriter to `channel` (on its event loop) and waits until it is in place.
    static func install(on channel: any Channel) async {
        try? await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.addHandler(SignalKUpgradeRefusal())
        }.get()
    }
}
