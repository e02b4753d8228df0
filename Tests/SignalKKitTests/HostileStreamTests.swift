import Foundation
import LookoutTestSupport
import SignalKKit
import XCTest

/// Issue 24 §6: a hostile Signal K server (a spoofed one on the boat's Wi-Fi) that begins a
/// fragmented WebSocket message and never finishes it: the stream closes the connection with an
/// error the caller sees, within the message bound, whether the fragments are empty (no size
/// ever reached) or large (the size limit counts their sum).
final class HostileStreamTests: XCTestCase {
    private func stream(_ server: HostileWebSocketServer, messageTimeout: Duration) throws -> SignalKStream {
        var config = try SignalKStreamConfiguration(url: server.url)
        config.messageTimeout = messageTimeout
        config.initialBackoff = .seconds(30)  // one connection is enough to look at
        return SignalKStream(configuration: config)
    }

    /// Endless empty continuation frames: nothing ever counts towards a size, so only the time
    /// bound stops them; the connection ends within it (plus the close handshake's 2 s).
    func testAMessageThatNeverFinishesClosesTheConnectionWithAnErrorWithinTheBound() async throws {
        let server = try HostileWebSocketServer(fragment: 0)
        defer { server.stop() }
        let stream = try stream(server, messageTimeout: .seconds(1))
        await stream.start()
        try await waitUntil("the stream reports the unfinished message", timeout: 20) { await stream.lastError != nil }
        let error = await stream.lastError
        XCTAssertEqual(error, .messageUnfinished(after: .seconds(1)))
        try await waitUntil("the hostile connection is closed", timeout: 20) { server.all.first?.ended != nil }
        let first = try XCTUnwrap(server.all.first)
        let lasted = try XCTUnwrap(first.ended).timeIntervalSince(first.began)
        XCTAssertLessThan(lasted, 8, "the connection lasted \(lasted) s")
        let state = await stream.state
        if case .connected = state { XCTFail("still connected") }
        await stream.close()
    }

    /// Endless 16 KiB continuation frames: the sum reaches the 1 MiB message limit long before
    /// the time bound; the error says so.
    func testTheSizeLimitAppliesToTheSumOfFragments() async throws {
        let server = try HostileWebSocketServer(fragment: 16 * 1024)
        defer { server.stop() }
        let stream = try stream(server, messageTimeout: .seconds(600))
        let events = await stream.events()
        await stream.start()
        try await waitUntil("the stream reports the oversized message", timeout: 20) { await stream.lastError != nil }
        let error = await stream.lastError
        XCTAssertEqual(error, .messageTooLarge(limit: 1 << 20))
        await stream.close()
        var sawError = false
        for await event in events { if case .connectionError(.messageTooLarge) = event { sawError = true } }
        XCTAssertTrue(sawError, "consumers get the error as an event")
    }
}
