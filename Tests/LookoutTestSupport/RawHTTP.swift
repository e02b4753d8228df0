import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// send(2) under a name `RawHTTP.send` does not shadow.
private func systemSend(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int { send(fd, bytes, count, Int32(MSG_NOSIGNAL)) }

/// One HTTP/1.1 exchange over a plain socket to 127.0.0.1, with exactly the header lines given
/// (a forged `Host`, an `Origin`, `Sec-Fetch-Site`…: what a browser or an attacker sends, which
/// URLSession and AsyncHTTPClient would rewrite).
public enum RawHTTP {
    /// An answer.
    public struct Answer: Sendable {
        /// The status code (0 when none could be read).
        public var status: Int
        /// Header lines as received, names lower case.
        public var headers: [String: String]
        /// The body.
        public var body: String
    }

    /// Sends `method target` with `headers` (each `Name: value`; no `Host` is added) and `body`,
    /// then reads until the server closes (`Connection: close` is sent), within `timeout` seconds.
    public static func send(port: Int, method: String, target: String, headers: [String], body: String = "",
                            timeout: TimeInterval = 10) throws -> Answer {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var wait = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw RawHTTPError("connect 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
        var lines = ["\(method) \(target) HTTP/1.1"] + headers + ["Connection: close"]
        if !body.isEmpty || method == "POST" { lines.append("Content-Length: \(body.utf8.count)") }
        let request = Array((lines.joined(separator: "\r\n") + "\r\n\r\n" + body).utf8)
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { systemSend(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw RawHTTPError("send: \(String(cString: strerror(errno)))") }
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += buffer[..<n]
        }
        return parse(String(decoding: received, as: UTF8.self))
    }

    static func parse(_ text: String) -> Answer {
        guard let split = text.range(of: "\r\n\r\n") else { return Answer(status: 0, headers: [:], body: text) }
        let head = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let status = head.first.flatMap { line in line.split(separator: " ").dropFirst().first.flatMap { Int($0) } } ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = String(text[split.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunk(body) }
        return Answer(status: status, headers: headers, body: body)
    }

    static func dechunk(_ text: String) -> String {
        var rest = Substring(text), out = ""
        while let lineEnd = rest.range(of: "\r\n"), let size = Int(rest[..<lineEnd.lowerBound], radix: 16), size > 0 {
            let start = lineEnd.upperBound
            let bytes = Array(rest[start...].utf8)
            guard bytes.count >= size else { break }
            out += String(decoding: bytes[..<size], as: UTF8.self)
            rest = Substring(String(decoding: bytes[size...], as: UTF8.self)).dropFirst(2)
        }
        return out
    }
}

/// A raw exchange failed before an answer.
public struct RawHTTPError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
