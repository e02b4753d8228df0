import Foundation
import LookoutWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The status server of the `serve` this process belongs to: its own (set when it listens) or,
/// in a `serve --isolate` worker, its parent's. The `http` module refuses to reach it, and ack
/// links point at it unless `[serve] public_url` says otherwise.
public enum ServeStatusAddress {
    private static let stored = Locked<[Int]>([])

    /// The status server's port on 127.0.0.1 (the last one started), once known.
    public static var port: Int? { stored.withLock { $0.last } }

    /// Every status port of this process (a test process may run several).
    public static var ports: [Int] { stored.withLock { $0 } }

    /// Records a port a status server listens on (0 is ignored).
    public static func add(port: Int) {
        guard port > 0 else { return }
        stored.withLock { ports in if !ports.contains(port) { ports.append(port) } }
    }

    /// Forgets a port whose server stopped.
    public static func remove(port: Int) { stored.withLock { $0.removeAll { $0 == port } } }
}

/// A script cannot reach its own host's status server through the `http` module: a request (or a
/// redirect hop) to the status port on any loopback spelling (`localhost`, `127.0.0.1`, `127.1`,
/// `0x7f.1`, `2130706433`, `0.0.0.0`, `[::1]`, `[::ffff:127.0.0.1]`, a name resolving to loopback…)
/// is refused with `nil, err` (code `refused`). The server listens on 127.0.0.1 only, so no other
/// address reaches it.
enum StatusPortGuard {
    /// Throws `refused` when `url` addresses the status server.
    static func check(_ url: String, method: String) throws(HTTPFailure) {
        let protected = ServeStatusAddress.ports
        guard !protected.isEmpty, let components = URLComponents(string: url), let host = components.host, !host.isEmpty
        else { return }
        let port = components.port ?? (components.scheme?.lowercased() == "https" ? 443 : 80)
        guard protected.contains(port), isLoopback(host) else { return }
        throw HTTPFailure.statusServer(method, url)
    }

    /// Whether `host` (as in a URL) names this machine's loopback (or the unspecified address,
    /// which connects to it).
    static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if let zone = name.firstIndex(of: "%") { name = String(name[..<zone]) }
        while name.hasSuffix(".") { name.removeLast() }
        if name.isEmpty { return false }
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        var v4 = in_addr()
        if inet_aton(name, &v4) != 0 { return isLoopback(ipv4: UInt32(bigEndian: v4.s_addr)) }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, name, &v6) == 1 { return isLoopback(ipv6: withUnsafeBytes(of: v6) { Array($0) }) }
        return resolvesToLoopback(name)
    }

    /// 127.0.0.0/8 or 0.0.0.0.
    static func isLoopback(ipv4 address: UInt32) -> Bool { address >> 24 == 127 || address == 0 }

    /// `::1`, `::`, and IPv4-mapped or -compatible forms of a loopback IPv4 address.
    static func isLoopback(ipv6 bytes: [UInt8]) -> Bool {
        guard bytes.count == 16 else { return false }
        let head = bytes.prefix(10)
        guard head.allSatisfy({ $0 == 0 }) else { return false }
        let v4 = bytes.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        if bytes[10] == 0xff && bytes[11] == 0xff { return isLoopback(ipv4: v4) }
        if bytes[10] == 0 && bytes[11] == 0 { return v4 <= 1 || isLoopback(ipv4: v4) }
        return false
    }

    /// Whether the system resolves `name` to a loopback address (asked only for the status port).
    private static func resolvesToLoopback(_ name: String) -> Bool {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let first = list else { return false }
        defer { freeaddrinfo(first) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let address = current.pointee.ai_addr {
                if current.pointee.ai_family == AF_INET {
                    let v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
                    if isLoopback(ipv4: UInt32(bigEndian: v4)) { return true }
                } else if current.pointee.ai_family == AF_INET6 {
                    let v6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    if isLoopback(ipv6: withUnsafeBytes(of: v6) { Array($0) }) { return true }
                }
            }
            entry = current.pointee.ai_next
        }
        return false
    }
}
