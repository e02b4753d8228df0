import Foundation
import XCTest
import LookoutConfig

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 for webhook deliveries from a `lookout` child process:
/// it records every request and answers each as `decide` says, or holds it (reads it, never
/// answers) so that the sender is caught mid-delivery. Plain sockets and threads: the test
/// process may kill the sender at any moment without disturbing a server framework.
final class HoldingHTTPPeer: @unchecked Sendable {
    // @unchecked Sendable: `requests` and `held` are only touched with `condition` locked; the
    // listening socket is set in init and closed once in `stop`.

    /// One request as received.
    struct Request: Sendable {
        var method: String
        var path: String
        var body: String
    }

    /// What to do with a request.
    enum Action: Sendable {
        /// Answer with this status (and a small JSON body), then close.
        case status(Int)
        /// Answer with this status and this JSON body, then close (a hostile server's answer).
        case answer(Int, body: String)
        /// Never answer; keep the connection open until `stop`.
        case hold
    }

    /// The base URL, `http://127.0.0.1:PORT`.
    let baseURL: String
    private let listener: Int32
    private let decide: @Sendable (Request, _ earlier: [Request]) -> Action
    private let condition = NSCondition()
    private var requests: [Request] = []
    private var held: [Int32] = []
    private var stopped = false

    /// Starts listening; `decide` sees each request and those received before it.
    init(decide: @escaping @Sendable (Request, _ earlier: [Request]) -> Action) throws {
        self.decide = decide
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw PeerError("socket: \(String(cString: strerror(errno)))") }
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
        guard bound else {
            close(fd)
            throw PeerError("cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))")
        }
        listener = fd
        baseURL = "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "HoldingHTTPPeer accept"
        thread.start()
    }

    /// Every request so far whose body contains `text`.
    func requests(containing text: String) -> [Request] {
        condition.withLock { requests.filter { $0.body.contains(text) } }
    }

    /// Waits until `predicate` holds for the requests received so far; false (with a test
    /// failure listing them) after `timeout` seconds.
    @discardableResult
    func waitFor(_ what: String, timeout: TimeInterval = 60, file: StaticString = #filePath, line: UInt = #line,
                 _ predicate: ([Request]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(requests) {
            if !condition.wait(until: deadline) {
                let seen = requests.map { "\($0.method) \($0.path) \($0.body)" }.joined(separator: "\n")
                XCTFail("timed out after \(timeout) s waiting for \(what); requests:\n\(seen)", file: file, line: line)
                return false
            }
        }
        return true
    }

    /// Stops accepting and closes held connections.
    func stop() {
        let fds = condition.withLock { () -> [Int32] in
            stopped = true
            defer { held = [] }
            return held
        }
        for fd in fds { close(fd) }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return  // closed by stop()
            }
            let thread = Thread { [self] in serve(client) }
            thread.name = "HoldingHTTPPeer connection"
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        guard let request = Self.read(fd) else {
            close(fd)
            return
        }
        let action = condition.withLock { () -> Action in
            let action = decide(request, requests)
            requests.append(request)
            if case .hold = action, !stopped { held.append(fd) }
            condition.broadcast()
            return action
        }
        switch action {
        case .hold:
            return  // left open: the sender waits for an answer that never comes
        case .status, .answer:
            let (status, body): (Int, String)
            switch action {
            case .answer(let code, let text): (status, body) = (code, text)
            case .status(let code): (status, body) = (code, code < 300 ? "{\"ok\":true}" : "{\"ok\":false}")
            case .hold: return
            }
            let text = "HTTP/1.1 \(status) \(status < 300 ? "OK" : "Error")\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { break }
                bytes = bytes.dropFirst(n)
            }
            close(fd)
        }
    }

    /// Reads one request (headers, then `Content-Length` bytes of body); nil if the peer closed.
    private static func read(_ fd: Int32) -> Request? {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var headerEnd: Int?
        var contentLength = 0
        while true {
            if let end = headerEnd, data.count >= end + contentLength { break }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return nil }
            data.append(contentsOf: buffer[0..<n])
            if headerEnd == nil, let range = findHeaderEnd(data) {
                headerEnd = range
                let head = String(decoding: data[0..<range], as: UTF8.self).lowercased()
                for line in head.split(separator: "\r\n") where line.hasPrefix("content-length:") {
                    contentLength = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
        }
        let end = headerEnd!
        let head = String(decoding: data[0..<end], as: UTF8.self)
        let requestLine = head.split(separator: "\r\n").first.map(String.init) ?? ""
        let parts = requestLine.split(separator: " ")
        return Request(method: parts.first.map(String.init) ?? "", path: parts.count > 1 ? String(parts[1]) : "",
                       body: String(decoding: data[end..<(end + contentLength)], as: UTF8.self))
    }

    /// The index just after the blank line that ends the headers.
    private static func findHeaderEnd(_ data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for i in 0...(data.count - 4) where data[i] == 13 && data[i + 1] == 10 && data[i + 2] == 13 && data[i + 3] == 10 {
            return i + 4
        }
        return nil
    }

    struct PeerError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
