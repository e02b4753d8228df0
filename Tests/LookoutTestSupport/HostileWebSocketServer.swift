import Foundation
import LookoutWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A hostile Signal K server of the tests' own on 127.0.0.1, writing raw WebSocket frames: it
/// answers the upgrade, sends a hello, then begins a text message and never finishes it, sending
/// continuation frames of `fragment` bytes (0: empty ones) as fast as the client reads them,
/// until the client closes the connection. Plain sockets and one thread per connection.
public final class HostileWebSocketServer: Sendable {
    /// One connection: when its first fragment went out and when the client closed it.
    public struct Connection: Sendable {
        /// When the first fragment went out.
        public var began: Date
        /// When the client closed the connection.
        public var ended: Date?
        /// Bytes of fragments sent.
        public var bytesSent = 0
    }

    /// `ws://127.0.0.1:PORT/signalk/v1/stream`.
    public let url: URL
    private let listener: Int32
    private let fragment: Int
    private let connections = Locked<[Int: Connection]>([:])
    private let stopped = Locked(false)

    /// Starts listening; each connection sends fragments of `fragment` bytes.
    public init(fragment: Int) throws {
        self.fragment = fragment
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard fd >= 0, bound else { throw POSIXError(.EADDRNOTAVAIL) }
        listener = fd
        url = URL(string: "ws://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/signalk/v1/stream")!
        Thread { [self] in acceptLoop() }.start()
    }

    /// The connections so far, in order.
    public var all: [Connection] { connections.withLock { d in d.keys.sorted().map { d[$0]! } } }

    /// Stops accepting; open connections end at their next write.
    public func stop() {
        stopped.withLock { $0 = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        var next = 0
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let id = next
            next += 1
            Thread { [self] in serve(client, id: id) }.start()
        }
    }

    private func serve(_ fd: Int32, id: Int) {
        defer { close(fd) }
        guard let key = Self.readUpgrade(fd) else { return }
        let accept = Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
        let head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"
        guard write(fd, Array(head.utf8)) else { return }
        let hello = #"{"name":"hostile","version":"2.0.0","self":"vessels.urn:mrn:imo:mmsi:230099999","roles":["master","main"],"# +
            #""timestamp":"2026-01-01T00:00:00.000Z"}"#
        guard write(fd, Self.frame(opcode: 1, fin: true, payload: Array(hello.utf8))) else { return }
        connections.withLock { $0[id] = Connection(began: Date()) }
        guard write(fd, Self.frame(opcode: 1, fin: false, payload: Array(#"{"updates":["#.utf8))) else { return finish(id) }
        let continuation = Self.frame(opcode: 0, fin: false, payload: [UInt8](repeating: UInt8(ascii: " "), count: fragment))
        // Many frames per write, so empty fragments go out quickly too.
        let batch = Array([[UInt8]](repeating: continuation, count: max(1, 65_536 / continuation.count)).joined())
        while !stopped.withLock({ $0 }) {
            guard write(fd, batch) else { break }
            connections.withLock { $0[id]?.bytesSent += batch.count }
        }
        finish(id)
    }

    private func finish(_ id: Int) { connections.withLock { $0[id]?.ended = Date() } }

    private func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var rest = bytes[...]
        while !rest.isEmpty {
            let n = rest.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Self.noSignal) }
            if n <= 0 { return false }
            rest = rest.dropFirst(n)
        }
        return true
    }

    #if canImport(Glibc)
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #else
    private static let noSignal: Int32 = 0
    #endif

    /// Reads the upgrade request; its `Sec-WebSocket-Key`.
    private static func readUpgrade(_ fd: Int32) -> String? {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !(data.count >= 4 && data.suffix(4) == [13, 10, 13, 10]) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 || data.count > 65_536 { return nil }
            data.append(contentsOf: buffer[0..<n])
        }
        for line in String(decoding: data, as: UTF8.self).split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "sec-websocket-key" { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    /// A server frame (unmasked).
    static func frame(opcode: UInt8, fin: Bool, payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        switch payload.count {
        case ..<126: out.append(UInt8(payload.count))
        case ..<65_536: out += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: out.append(127); out += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        return out + payload
    }
}

/// SHA-1 (RFC 3174), for the WebSocket handshake only.
enum SHA1 {
    /// The 20-byte digest of `message`.
    static func digest(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0]
        var m = message
        let bits = UInt64(message.count) * 8
        m.append(0x80)
        while m.count % 64 != 56 { m.append(0) }
        m += (0..<8).reversed().map { UInt8((bits >> (UInt64($0) * 8)) & 0xFF) }
        for chunk in stride(from: 0, to: m.count, by: 64) {
            var w = [UInt32](repeating: 0, count: 80)
            for i in 0..<16 {
                w[i] = (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(m[chunk + i * 4 + $1]) }
            }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w[i] = x << 1 | x >> 31
            }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32)
                switch i {
                case ..<20: (f, k) = ((b & c) | (~b & d), 0x5A827999)
                case ..<40: (f, k) = (b ^ c ^ d, 0x6ED9EBA1)
                case ..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1BBCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62C1D6)
                }
                let t = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, t)
            }
            h[0] = h[0] &+ a; h[1] = h[1] &+ b; h[2] = h[2] &+ c; h[3] = h[3] &+ d; h[4] = h[4] &+ e
        }
        return h.flatMap { v in (0..<4).reversed().map { UInt8((v >> (UInt32($0) * 8)) & 0xFF) } }
    }
}
