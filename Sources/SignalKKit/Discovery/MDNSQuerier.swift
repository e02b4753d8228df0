import Foundation
import LookoutWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 interface to send mDNS queries on (name and address, e.g. `lo` / `127.0.0.1`).
public struct MDNSInterface: Sendable, Hashable, CustomStringConvertible {
    /// The interface name (`lo`, `en0`, `eth0`).
    public var name: String
    /// Dotted IPv4 address.
    public var address: String

    /// An interface by name and dotted IPv4 address.
    public init(name: String, address: String) {
        self.name = name
        self.address = address
    }

    /// The loopback interface (`127.0.0.1`): nothing leaves the machine.
    public static let loopback = MDNSInterface(name: "lo", address: "127.0.0.1")

    public var description: String { "\(name) (\(address))" }

    /// The IPv4 interfaces that are up and are loopback or multicast-capable, loopback first.
    public static func available() -> [MDNSInterface] {
        var head: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&head) == 0, let first = head else { return [] }
        defer { freeifaddrs(head) }
        var out: [MDNSInterface] = []
        var loopbacks: [MDNSInterface] = []
        var p: UnsafeMutablePointer<ifaddrs>? = first
        while let ifa = p {
            defer { p = ifa.pointee.ifa_next }
            let flags = Int32(bitPattern: UInt32(ifa.pointee.ifa_flags))
            guard let sa = ifa.pointee.ifa_addr, Int32(sa.pointee.sa_family) == AF_INET,
                  flags & Int32(IFF_UP) != 0 else { continue }
            let isLoopback = flags & Int32(IFF_LOOPBACK) != 0
            guard isLoopback || flags & Int32(IFF_MULTICAST) != 0 else { continue }
            let addr = sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            let iface = MDNSInterface(name: String(cString: ifa.pointee.ifa_name), address: ipv4String(addr))
            if isLoopback { loopbacks.append(iface) } else { out.append(iface) }
        }
        return loopbacks + out
    }
}

/// What one browse saw for one service instance.
public struct MDNSServiceInstance: Sendable, Hashable {
    /// The full instance name (`Spike Server._signalk-ws._tcp.local.`).
    public var instance: MDNSName
    /// The service type it was found under (`_signalk-ws._tcp.local.`).
    public var serviceType: MDNSName
    /// SRV target host name (`spike.local.`).
    public var host: MDNSName
    /// The SRV port of the service.
    public var port: UInt16
    /// A and AAAA addresses of `host`, IPv4 first.
    public var addresses: [String]
    /// TXT key/values (keys lowercased).
    public var txt: [String: String]
}

/// A one-shot mDNS (RFC 6762) browser over plain POSIX UDP sockets; no daemon needed.
///
/// - Sends PTR queries for the service types to 224.0.0.251:5353 on each interface
///   (`IP_MULTICAST_IF` set explicitly, loopback enabled, TTL 255), from a random port, so
///   responders answer by unicast (RFC 6762 §6.7), and retransmits after 1 s, 2 s, 4 s, … (§5.2).
/// - Also listens on 5353 with the group joined on each interface (best effort: if that port or
///   the join is refused, unicast answers alone are used) to see multicast answers.
/// - Asks for SRV/TXT of instances and A/AAAA of hosts that answers left unresolved.
/// - Runs on its own thread; task cancellation wakes it at once and `browse` throws
///   `CancellationError`. Every socket is closed on every path.
public struct MDNSQuerier: Sendable {
    /// The service types to browse for (`_signalk-ws._tcp.local.`).
    public var serviceTypes: [MDNSName]
    /// The IPv4 interfaces to query on; `browse` throws when empty.
    public var interfaces: [MDNSInterface]

    /// A browser for these service types on these interfaces.
    public init(serviceTypes: [MDNSName], interfaces: [MDNSInterface]) {
        self.serviceTypes = serviceTypes
        self.interfaces = interfaces
    }

    /// Browses for `timeout`, then returns every instance whose SRV record was seen.
    public func browse(timeout: Duration) async throws -> [MDNSServiceInstance] {
        guard !interfaces.isEmpty else { throw MDNSError.noInterfaces("the interface list is empty") }
        try Task.checkCancellation()
        let session = try BrowseSession(serviceTypes: serviceTypes, interfaces: interfaces, timeout: timeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (cont: CheckedContinuation<[MDNSServiceInstance], any Error>) in
                let thread = Thread { cont.resume(with: Result { try session.run() }) }
                thread.name = "mdns-browse"
                thread.start()
            }
        } onCancel: {
            session.cancel()
        }
    }
}

// MARK: - Session

/// Sockets and the wake pipe of one browse. `run()` owns them and closes them when it returns
/// (or `deinit` closes them if `run()` never ran).
private final class BrowseSession: Sendable {
    // The fds are immutable and `closed`/`cancelled` are locked; `run()` is called once, on one
    // thread.
    let serviceTypes: [MDNSName]
    let interfaces: [MDNSInterface]
    let timeout: Duration
    let unicastFD: Int32
    let multicastFD: Int32  // -1 when 5353 could not be used
    let wakeRead: Int32
    let wakeWrite: Int32
    private let flags = Locked((closed: false, cancelled: false))

    init(serviceTypes: [MDNSName], interfaces: [MDNSInterface], timeout: Duration) throws {
        self.serviceTypes = serviceTypes
        self.interfaces = interfaces
        self.timeout = timeout
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw posixError("pipe") }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        do {
            unicastFD = try Self.openUnicastSocket()
        } catch {
            close(wakeRead); close(wakeWrite)
            throw error
        }
        multicastFD = Self.openMulticastSocket(interfaces: interfaces)
        _ = fcntl(wakeRead, F_SETFL, fcntl(wakeRead, F_GETFL) | O_NONBLOCK)
        _ = fcntl(wakeWrite, F_SETFL, fcntl(wakeWrite, F_GETFL) | O_NONBLOCK)
    }

    deinit { closeAll() }

    /// Wakes `run()`, which then throws `CancellationError`.
    func cancel() {
        flags.withLock { flags in
            flags.cancelled = true
            guard !flags.closed else { return }
            var b: UInt8 = 1
            _ = write(wakeWrite, &b, 1)
        }
    }

    private var isCancelled: Bool { flags.withLock { $0.cancelled } }

    private func closeAll() {
        flags.withLock { flags in
            guard !flags.closed else { return }
            flags.closed = true
            for fd in [unicastFD, multicastFD, wakeRead, wakeWrite] where fd >= 0 { close(fd) }
        }
    }

    private static func openUnicastSocket() throws -> Int32 {
        let fd = socket(AF_INET, sockDgram, 0)
        guard fd >= 0 else { throw posixError("socket") }
        do {
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = 0
            addr.sin_addr = in_addr(s_addr: INADDR_ANY)
            try bindIPv4(fd, &addr)
            try setInt(fd, ipprotoIP, IP_MULTICAST_TTL, 255, "IP_MULTICAST_TTL")
            try setInt(fd, ipprotoIP, IP_MULTICAST_LOOP, 1, "IP_MULTICAST_LOOP")
            try setNonBlocking(fd)
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// 0.0.0.0:5353 with SO_REUSEADDR/SO_REUSEPORT and the group joined on each interface, or -1.
    private static func openMulticastSocket(interfaces: [MDNSInterface]) -> Int32 {
        let fd = socket(AF_INET, sockDgram, 0)
        guard fd >= 0 else { return -1 }
        do {
            try setInt(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR")
            try setInt(fd, SOL_SOCKET, SO_REUSEPORT, 1, "SO_REUSEPORT")
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = in_port_t(5353).bigEndian
            addr.sin_addr = in_addr(s_addr: INADDR_ANY)
            try bindIPv4(fd, &addr)
            var joined = 0
            for iface in interfaces {
                var mreq = ip_mreq()
                mreq.imr_multiaddr = mdnsGroup
                guard let local = parseIPv4(iface.address) else { continue }
                mreq.imr_interface = local
                if setsockopt(fd, ipprotoIP, IP_ADD_MEMBERSHIP, &mreq, socklen_t(MemoryLayout<ip_mreq>.size)) == 0 {
                    joined += 1
                }
            }
            guard joined > 0 else { close(fd); return -1 }
            try setNonBlocking(fd)
            return fd
        } catch {
            close(fd)
            return -1
        }
    }

    // MARK: Browse loop

    private struct Cache {
        var instances: [MDNSName: MDNSName] = [:]  // instance → service type
        var srv: [MDNSName: (target: MDNSName, port: UInt16)] = [:]
        var txt: [MDNSName: [String: String]] = [:]
        var v4: [MDNSName: Set<String>] = [:]
        var v6: [MDNSName: Set<String>] = [:]
    }

    func run() throws -> [MDNSServiceInstance] {
        defer { closeAll() }
        let start = ContinuousClock.now
        let deadline = start + timeout
        var nextSend = start
        var interval = Duration.seconds(1)
        var cache = Cache()
        var asked = Set<MDNSQuestion>()
        var sentOnce = false
        var buffer = [UInt8](repeating: 0, count: 9000)

        while true {
            if isCancelled { throw CancellationError() }
            var now = ContinuousClock.now
            if now >= deadline { break }
            if now >= nextSend {
                let pending = unresolvedQuestions(cache)
                try send(serviceTypes.map { MDNSQuestion(name: $0, type: MDNSRecordType.ptr) } + pending,
                         mustSucceed: !sentOnce)
                sentOnce = true
                asked.formUnion(pending)
                nextSend = now + interval
                interval *= 2
            }
            now = ContinuousClock.now
            let wait = min(deadline, nextSend) - now
            let ms = max(0, Int32(clamping: wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000))
            var pfds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                        pollfd(fd: unicastFD, events: Int16(POLLIN), revents: 0)]
            if multicastFD >= 0 { pfds.append(pollfd(fd: multicastFD, events: Int16(POLLIN), revents: 0)) }
            let n = poll(&pfds, nfds_t(pfds.count), ms)
            if n < 0 {
                if errno == EINTR { continue }
                throw posixError("poll")
            }
            if pfds[0].revents != 0 { throw CancellationError() }
            for p in pfds.dropFirst() where p.revents & Int16(POLLIN) != 0 {
                drain(p.fd, &buffer) { ingest($0, into: &cache) }
            }
            // Resolve new instances/hosts at once instead of waiting for the next retransmit.
            let fresh = unresolvedQuestions(cache).filter { !asked.contains($0) }
            if !fresh.isEmpty {
                try? send(fresh, mustSucceed: false)
                asked.formUnion(fresh)
            }
        }
        return results(cache)
    }

    private func unresolvedQuestions(_ cache: Cache) -> [MDNSQuestion] {
        var qs: [MDNSQuestion] = []
        for instance in cache.instances.keys.sorted(by: { $0.description < $1.description }) {
            if cache.srv[instance] == nil { qs.append(MDNSQuestion(name: instance, type: MDNSRecordType.srv)) }
            if cache.txt[instance] == nil { qs.append(MDNSQuestion(name: instance, type: MDNSRecordType.txt)) }
            if let host = cache.srv[instance]?.target, cache.v4[host] == nil, cache.v6[host] == nil {
                let q = MDNSQuestion(name: host, type: MDNSRecordType.a)
                if !qs.contains(q) { qs.append(q) }
            }
        }
        return qs
    }

    private func send(_ questions: [MDNSQuestion], mustSucceed: Bool) throws {
        // Keep packets small: at most 20 questions each.
        var failures: [String] = []
        var sent = 0
        var chunks: [[MDNSQuestion]] = []
        var i = 0
        while i < questions.count { chunks.append(Array(questions[i..<min(i + 20, questions.count)])); i += 20 }
        let packets = try chunks.map { try MDNSMessage.query($0).encode() }
        var dest = sockaddr_in()
        dest.sin_family = sa_family_t(AF_INET)
        dest.sin_port = in_port_t(5353).bigEndian
        dest.sin_addr = mdnsGroup
        for iface in interfaces {
            guard var local = parseIPv4(iface.address) else {
                failures.append("\(iface): not an IPv4 address")
                continue
            }
            if setsockopt(unicastFD, ipprotoIP, IP_MULTICAST_IF, &local, socklen_t(MemoryLayout<in_addr>.size)) != 0 {
                failures.append("\(iface): IP_MULTICAST_IF: \(String(cString: strerror(errno)))")
                continue
            }
            for packet in packets {
                let r = packet.withUnsafeBytes { raw in
                    withUnsafePointer(to: &dest) { d in
                        d.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            sendto(unicastFD, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                        }
                    }
                }
                if r < 0 {
                    failures.append("\(iface): sendto: \(String(cString: strerror(errno)))")
                } else {
                    sent += 1
                }
            }
        }
        if mustSucceed && sent == 0 {
            throw MDNSError.sendFailed(detail: failures.joined(separator: "; "))
        }
    }

    private func drain(_ fd: Int32, _ buffer: inout [UInt8], _ body: (MDNSMessage) -> Void) {
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return }  // EAGAIN (drained) or an error: poll again later
            // Malformed packets are dropped: one bad responder must not stop the browse.
            if let message = try? MDNSMessage.decode(Array(buffer[0..<n])), message.isResponse {
                body(message)
            }
        }
    }

    private func ingest(_ message: MDNSMessage, into cache: inout Cache) {
        let types = Set(serviceTypes)
        for r in message.allRecords {
            switch r.data {
            case .ptr(let target) where types.contains(r.name):
                if r.ttl == 0 {
                    cache.instances[target] = nil  // goodbye
                } else {
                    cache.instances[target] = r.name
                }
            case .srv(_, _, let port, let target):
                if r.ttl == 0 { cache.srv[r.name] = nil } else { cache.srv[r.name] = (target, port) }
            case .txt:
                if r.ttl > 0 { cache.txt[r.name] = r.data.txtDictionary }
            case .a(let b) where r.ttl > 0:
                cache.v4[r.name, default: []].insert(b.map(String.init).joined(separator: "."))
            case .aaaa(let b) where r.ttl > 0:
                cache.v6[r.name, default: []].insert(ipv6String(b))
            default:
                break
            }
        }
    }

    private func results(_ cache: Cache) -> [MDNSServiceInstance] {
        var out: [MDNSServiceInstance] = []
        for (instance, type) in cache.instances {
            guard let srv = cache.srv[instance] else { continue }
            let addresses = (cache.v4[srv.target] ?? []).sorted() + (cache.v6[srv.target] ?? []).sorted()
            out.append(MDNSServiceInstance(instance: instance, serviceType: type, host: srv.target, port: srv.port,
                                           addresses: addresses, txt: cache.txt[instance] ?? [:]))
        }
        return out.sorted { ($0.serviceType.description, $0.instance.description) < ($1.serviceType.description, $1.instance.description) }
    }
}

// MARK: - POSIX helpers

#if canImport(Glibc)
private let sockDgram = Int32(SOCK_DGRAM.rawValue)
#else
private let sockDgram = SOCK_DGRAM
#endif

private let ipprotoIP = Int32(IPPROTO_IP)

private let mdnsGroup = in_addr(s_addr: UInt32(0xE00000FB).bigEndian)  // 224.0.0.251

private func posixError(_ call: String) -> MDNSError {
    let e = errno
    return .socket(call: call, errno: e, detail: String(cString: strerror(e)))
}

private func setInt(_ fd: Int32, _ level: Int32, _ option: Int32, _ value: Int32, _ name: String) throws {
    var v = value
    guard setsockopt(fd, level, option, &v, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
        throw posixError("setsockopt(\(name))")
    }
}

private func setNonBlocking(_ fd: Int32) throws {
    guard fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0 else { throw posixError("fcntl(O_NONBLOCK)") }
}

private func bindIPv4(_ fd: Int32, _ addr: inout sockaddr_in) throws {
    let r = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard r == 0 else { throw posixError("bind") }
}

private func parseIPv4(_ s: String) -> in_addr? {
    var a = in_addr()
    return inet_pton(AF_INET, s, &a) == 1 ? a : nil
}

private func ipv4String(_ a: in_addr) -> String {
    let v = UInt32(bigEndian: a.s_addr)
    return "\(v >> 24).\(v >> 16 & 0xFF).\(v >> 8 & 0xFF).\(v & 0xFF)"
}

private func ipv6String(_ b: [UInt8]) -> String {
    guard b.count == 16 else { return "" }
    var buf = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
    let ok = b.withUnsafeBytes { raw in inet_ntop(AF_INET6, raw.baseAddress, &buf, socklen_t(buf.count)) != nil }
    guard ok else { return "" }
    return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
