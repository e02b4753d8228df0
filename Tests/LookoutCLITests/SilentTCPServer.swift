import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A server on 127.0.0.1 that accepts every connection and never answers (nor reads): requests
/// to it stay in flight until the client gives up. Plain sockets and one accept thread.
final class SilentTCPServer: @unchecked Sendable {
    // @unchecked Sendable: `held` and `stopped` are only touched with `lock` held; the listening
    // socket is set in init and closed once in `stop`.

    /// The base URL, `http://127.0.0.1:PORT`.
    let baseURL: String
    private let listener: Int32
    private let lock = NSLock()
    private var held: [Int32] = []
    private var stopped = false

    /// Starts listening.
    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HoldingHTTPPeer.PeerError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 4096) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw HoldingHTTPPeer.PeerError("cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))")
        }
        listener = fd
        baseURL = "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "SilentTCPServer accept"
        thread.start()
    }

    /// Connections accepted so far.
    var accepted: Int { lock.withLock { held.count } }

    /// Stops accepting and closes every connection.
    func stop() {
        let fds = lock.withLock { () -> [Int32] in
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
                if errno == EINTR || errno == ECONNABORTED { continue }
                if errno == EMFILE || errno == ENFILE { usleep(10_000); continue }  // out of descriptors: back off
                return  // closed by stop()
            }
            let keep = lock.withLock { () -> Bool in
                if !stopped { held.append(client) }
                return !stopped
            }
            if !keep { close(client) }
        }
    }
}
