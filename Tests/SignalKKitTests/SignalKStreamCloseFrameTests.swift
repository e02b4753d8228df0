import Foundation
import SignalKKit
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket server of the test's own on raw sockets, so that it sees the frames themselves:
/// it upgrades one connection, sends a hello and records the opcode of every frame the client
/// sends until the connection ends (answering a close frame with one).
final class RawWebSocketPeer: @unchecked Sendable {
    // @unchecked Sendable: `opcodes`/`finished` are only touched under `lock`; the socket belongs to
    // the peer's one thread.
    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var opcodes: [UInt8] = []
    private var finished = false

    init() throws {
        let l = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var yes: Int32 = 1
        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(l, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(l, 4) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(l, $0, &length) }
        }
        listener = l
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// The opcodes received so far and whether the connection has ended.
    var seen: (opcodes: [UInt8], finished: Bool) { lock.withLock { (opcodes, finished) } }

    private func serve() {
        let fd = accept(listener, nil, nil)
        close(listener)
        guard fd >= 0 else { return }
        defer {
            close(fd)
            lock.withLock { finished = true }
        }
        var pending = [UInt8]()
        func read(_ n: Int) -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while pending.count < n {
                let got = recv(fd, &buffer, buffer.count, 0)
                guard got > 0 else { return nil }
                pending += buffer[0..<got]
            }
            let out = Array(pending.prefix(n))
            pending.removeFirst(n)
            return out
        }
        func write(_ bytes: [UInt8]) { _ = bytes.withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count, 0) } }
        // The upgrade request.
        var request = ""
        while !request.contains("\r\n\r\n") {
            guard let byte = read(1) else { return }
            request.append(Character(Unicode.Scalar(byte[0])))
        }
        let keyLine = request.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") } ?? ""
        let key = keyLine.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let accept = Data(SHA1Digest.of(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
        write(Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n".utf8))
        let hello = Array(#"{"name":"signalk-server","version":"2.31.1","self":"vessels.urn:mrn:imo:mmsi:230000001","roles":["master","main"],"timestamp":"2024-05-01T10:00:00.000Z"}"#.utf8)
        write([0x81, 126, UInt8(hello.count >> 8), UInt8(hello.count & 0xFF)] + hello)
        while let header = read(2) {
            let opcode = header[0] & 0x0F
            var length = Int(header[1] & 0x7F)
            if length == 126 { guard let l = read(2) else { return }; length = Int(l[0]) << 8 | Int(l[1]) }
            if length == 127 { guard let l = read(8) else { return }; length = l.reduce(0) { $0 << 8 | Int($1) } }
            let masked = header[1] & 0x80 != 0
            guard let mask = masked ? read(4) : [0, 0, 0, 0], let payload = read(length) else { return }
            let data = payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
            lock.withLock { opcodes.append(opcode) }
            if opcode == 0x8 {
                write([0x88, UInt8(min(data.count, 125))] + data.prefix(125))
                return
            }
        }
    }
}

/// SHA-1 (RFC 3174), for the WebSocket accept key only.
enum SHA1Digest {
    static func of(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var m = message + [0x80]
        while m.count % 64 != 56 { m.append(0) }
        let bits = UInt64(message.count) * 8
        m += (0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * UInt64($0))) }
        for chunk in stride(from: 0, to: m.count, by: 64) {
            var w = (0..<16).map { i in (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(m[chunk + 4 * i + $1]) } }
            for i in 16..<80 { let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]; w.append(x << 1 | x >> 31) }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32)
                switch i {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let t = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, t)
            }
            h = [h[0] &+ a, h[1] &+ b, h[2] &+ c, h[3] &+ d, h[4] &+ e]
        }
        return h.flatMap { v in (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt32($0))) } }
    }
}

final class SignalKStreamCloseFrameTests: XCTestCase {
    func testSHA1() {
        XCTAssertEqual(Data(SHA1Digest.of(Array("dGhlIHNhbXBsZSBub25jZQ==258EAFA5-E914-47DA-95CA-C5AB0DC85B11".utf8))).base64EncodedString(),
                       "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    /// `close()` ends the connection with a WebSocket close frame (normal closure), not by
    /// dropping the TCP connection (issue 27 reported none; on a direct `close()` of a connected
    /// stream the frame goes out, and this keeps it so).
    func testCloseSendsACloseFrame() async throws {
        let peer = try RawWebSocketPeer()
        let config = try SignalKStreamConfiguration(url: URL(string: "http://127.0.0.1:\(peer.port)")!)
        let stream = SignalKStream(configuration: config)
        await stream.start()
        try await waitUntil("the hello") { await stream.helloCount >= 1 }
        await stream.close()
        try await waitUntil("the connection ends") { peer.seen.finished }
        XCTAssertEqual(peer.seen.opcodes.last, 0x8, "opcodes seen: \(peer.seen.opcodes)")
    }
}
