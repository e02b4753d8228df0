import Foundation
import LookoutModules

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// P4's null consumer: a minimal blocking WebSocket client on its own thread that reads the
/// simulator's stream and only counts text frames (no JSON, no copies), so the rate it sees is
/// what the server can send over loopback.
enum DeltaStreamSink {
    /// Connects to `/signalk/v1/stream?subscribe=none` on `port`, skips the hello and times
    /// `count` text frames from the first to the last.
    /// - Parameter ready: called on the sink's thread once the upgrade was answered.
    /// - Returns: seconds from the first counted frame to the last.
    static func receive(port: Int, count: Int) async throws -> Double {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Double, any Error>) in
            let thread = Thread {
                do { continuation.resume(returning: try blockingReceive(port: port, count: count)) } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.name = "lookout-bench P4 sink"
            thread.start()
        }
    }

    private static func blockingReceive(port: Int, count: Int) throws -> Double {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw BenchFailure("sink: socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw BenchFailure("sink: cannot connect to 127.0.0.1:\(port)") }
        let request = "GET /signalk/v1/stream?subscribe=none HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            + "Sec-WebSocket-Version: 13\r\n\r\n"
        let sent = request.utf8CString.withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count - 1, 0) }
        guard sent == request.utf8.count else { throw BenchFailure("sink: cannot send the upgrade request") }

        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var start = 0, end = 0
        func fill() throws {
            if start > 0 && start == end { start = 0; end = 0 }
            if end == buffer.count {
                buffer.replaceSubrange(0..<end - start, with: buffer[start..<end])
                end -= start
                start = 0
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + end, $0.count - end, 0) }
            guard n > 0 else { throw BenchFailure("sink: the server closed the stream") }
            end += n
        }
        // The 101 response.
        while true {
            try fill()
            if let range = buffer[start..<end].firstRange(of: [13, 10, 13, 10]) {
                let head = String(decoding: buffer[start..<range.lowerBound], as: UTF8.self)
                guard head.hasPrefix("HTTP/1.1 101") else { throw BenchFailure("sink: upgrade refused: \(head.prefix(40))") }
                start = range.upperBound
                break
            }
        }
        var texts = 0
        var first = 0.0
        while true {
            // Frame header: FIN/opcode, length (7, 7+16 or 7+64 bits); server frames are unmasked.
            while end - start < 2 { try fill() }
            let opcode = buffer[start] & 0x0f
            var length = Int(buffer[start + 1] & 0x7f)
            var header = 2
            if length == 126 { header = 4 } else if length == 127 { header = 10 }
            while end - start < header { try fill() }
            if header == 4 {
                length = Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
            } else if header == 10 {
                length = 0
                for i in 2..<10 { length = length << 8 | Int(buffer[start + i]) }
            }
            var skip = header + length
            while skip > 0 {
                if start == end { try fill() }
                let take = min(skip, end - start)
                start += take
                skip -= take
            }
            if opcode == 8 { throw BenchFailure("sink: the server closed the stream after \(texts) frames") }
            guard opcode == 1 else { continue }
            texts += 1
            if texts == 2 { first = BenchClock.monotonic() }  // frame 1 is the hello
            if texts == count + 1 { return BenchClock.monotonic() - first }
        }
    }
}
