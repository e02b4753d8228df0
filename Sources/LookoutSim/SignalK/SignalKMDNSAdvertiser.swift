import Foundation
import LookoutWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A minimal mDNS (RFC 6762) / DNS-SD (RFC 6763) responder that advertises a Signal K simulator
/// the way signalk-server does (shared/specs/signalk.md §1.1), over plain UDP sockets (no daemon).
///
/// ```swift
/// let ad = SignalKMDNSAdvertiser(service: .init(instanceName: "Lookout Sim", port: 3000))
/// try ad.start()      // answers on 224.0.0.251:5353 via 127.0.0.1
/// ad.stop()           // sends goodbyes (TTL 0), closes the socket
/// ```
///
/// - Binds 0.0.0.0:5353 (SO_REUSEADDR/SO_REUSEPORT, so it coexists with other responders) and joins
///   the group on `interfaceAddress`; sends with `IP_MULTICAST_IF` = that address.
/// - Answers PTR questions for its service types and `_services._dns-sd._udp.local`, SRV/TXT
///   (and ANY) for its instance names, A (and ANY) for its host; answers carry SRV/TXT/A as
///   additional records.
/// - Queries from a port other than 5353 get a unicast "legacy" reply (id and question echoed,
///   TTL ≤ 10); all others, QU included, get a multicast reply.
/// - Announces twice (at start and 1 s later); sends goodbyes on `stop()`.
/// - Simplifications: no probing or conflict resolution, no known-answer suppression, no
///   rate limiting, IPv4 only.
///
/// Self-contained on purpose: LookoutSim shares no code with SignalKKit (only LookoutWire's lock).
public final class SignalKMDNSAdvertiser: Sendable {

    /// What is advertised.
    public struct Service: Sendable {
        /// Instance name (the first label), e.g. `Lookout Sim`.
        public var instanceName: String
        /// Service types without domain; signalk-server advertises the same port under each.
        public var serviceTypes: [String]
        /// Host name without `.local` (the SRV target is `<hostName>.local`).
        public var hostName: String
        /// The TCP port the simulator listens on (the SRV port).
        public var port: UInt16
        /// IPv4 addresses for the A record(s); usually the interface address.
        public var addresses: [String]
        /// TXT key/values, in order (empty values are dropped, as signalk-server does).
        public var txt: [(String, String)]

        /// A service; the defaults advertise `lookout-sim.local` at 127.0.0.1 with signalk-server's types and TXT record.
        public init(instanceName: String, serviceTypes: [String] = ["_signalk-ws._tcp", "_signalk-http._tcp", "_http._tcp"],
                    hostName: String = "lookout-sim", port: UInt16, addresses: [String] = ["127.0.0.1"],
                    txt: [(String, String)] = SignalKMDNSAdvertiser.signalKTXT()) {
            self.instanceName = instanceName
            self.serviceTypes = serviceTypes
            self.hostName = hostName
            self.port = port
            self.addresses = addresses
            self.txt = txt
        }
    }

    /// An error starting the advertiser.
    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    /// signalk-server's TXT record: `txtvers=1`, `swname`, `swvers`, `roles=master, main` (with
    /// the space), `self`, and `vname`/`vmmsi` when given.
    public static func signalKTXT(selfURN: String = "urn:mrn:imo:mmsi:230099999", version: String = "2.31.1",
                                  vesselName: String = "", mmsi: String = "") -> [(String, String)] {
        [("txtvers", "1"), ("swname", "signalk-server"), ("swvers", version), ("roles", "master, main"),
         ("self", selfURN), ("vname", vesselName), ("vmmsi", mmsi)].filter { !$0.1.isEmpty }
    }

    /// What this advertiser announces.
    public let service: Service
    /// The interface address to join the group on and send from (default loopback).
    public let interfaceAddress: String

    /// The socket, the wake pipe and the responder's end signal, while running. The responder
    /// thread reads the immutable configuration only.
    private struct Running {
        var fd: Int32 = -1
        var wakeRead: Int32 = -1
        var wakeWrite: Int32 = -1
        var finished: DispatchSemaphore?
    }

    private let running = Locked(Running())

    /// An advertiser, not yet started (call `start()`).
    public init(service: Service, interfaceAddress: String = "127.0.0.1") {
        self.service = service
        self.interfaceAddress = interfaceAddress
    }

    deinit { stop() }

    /// Opens the socket, starts the responder thread and announces. Throws ``StartError``.
    public func start() throws {
        try running.withLock { try start(&$0) }
    }

    private func start(_ running: inout Running) throws {
        guard running.finished == nil else { return }
        guard let local = Self.parseIPv4(interfaceAddress) else {
            throw StartError(description: "mDNS advertiser: \(interfaceAddress) is not an IPv4 address")
        }
        for a in service.addresses where Self.parseIPv4(a) == nil {
            throw StartError(description: "mDNS advertiser: address \(a) is not IPv4")
        }
        _ = try encode(records: answers(for: []), id: 0, questions: [], ttlCap: nil)  // validates names/TXT
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw Self.posix("pipe") }
        let s = socket(AF_INET, Self.sockDgram, 0)
        guard s >= 0 else {
            let e = Self.posix("socket")
            close(fds[0]); close(fds[1])
            throw e
        }
        do {
            try Self.setInt(s, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR")
            try Self.setInt(s, SOL_SOCKET, SO_REUSEPORT, 1, "SO_REUSEPORT")
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = in_port_t(5353).bigEndian
            addr.sin_addr = in_addr(s_addr: INADDR_ANY)
            let r = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard r == 0 else { throw Self.posix("bind 0.0.0.0:5353") }
            var mreq = ip_mreq(imr_multiaddr: Self.group, imr_interface: local)
            guard setsockopt(s, Self.ipproto, IP_ADD_MEMBERSHIP, &mreq, socklen_t(MemoryLayout<ip_mreq>.size)) == 0 else {
                throw Self.posix("IP_ADD_MEMBERSHIP 224.0.0.251 on \(interfaceAddress)")
            }
            var ifaddr = local
            guard setsockopt(s, Self.ipproto, IP_MULTICAST_IF, &ifaddr, socklen_t(MemoryLayout<in_addr>.size)) == 0 else {
                throw Self.posix("IP_MULTICAST_IF \(interfaceAddress)")
            }
            try Self.setInt(s, Self.ipproto, IP_MULTICAST_TTL, 255, "IP_MULTICAST_TTL")
            try Self.setInt(s, Self.ipproto, IP_MULTICAST_LOOP, 1, "IP_MULTICAST_LOOP")
            _ = fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK)
        } catch {
            close(s); close(fds[0]); close(fds[1])
            throw error
        }
        running.fd = s
        running.wakeRead = fds[0]
        running.wakeWrite = fds[1]
        let done = DispatchSemaphore(value: 0)
        running.finished = done
        let thread = Thread { [s, wr = fds[0]] in
            self.serve(socket: s, wake: wr)
            done.signal()
        }
        thread.name = "mdns-advertiser"
        thread.start()
    }

    /// Sends goodbyes, stops the thread and closes the socket. Safe to call more than once.
    public func stop() {
        let done = running.withLock { running -> DispatchSemaphore? in
            guard let done = running.finished else { return nil }
            var b: UInt8 = 1
            _ = write(running.wakeWrite, &b, 1)
            return done
        }
        guard let done else { return }
        done.wait()
        running.withLock { running in
            for f in [running.fd, running.wakeRead, running.wakeWrite] where f >= 0 { close(f) }
            running = Running()
        }
    }

    // MARK: Responder loop

    private func serve(socket s: Int32, wake: Int32) {
        announce(s, ttl: nil)
        var secondAnnouncement: ContinuousClock.Instant? = .now + .seconds(1)
        var buffer = [UInt8](repeating: 0, count: 9000)
        while true {
            var timeout: Int32 = -1
            if let due = secondAnnouncement {
                let left = due - .now
                timeout = max(0, Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            }
            var pfds = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0), pollfd(fd: s, events: Int16(POLLIN), revents: 0)]
            let n = poll(&pfds, 2, timeout)
            if n < 0 && errno != EINTR { break }
            if pfds[0].revents != 0 { break }
            if let due = secondAnnouncement, ContinuousClock.now >= due {
                announce(s, ttl: nil)
                secondAnnouncement = nil
            }
            guard pfds[1].revents & Int16(POLLIN) != 0 else { continue }
            while true {
                var from = sockaddr_in()
                var fromLen = socklen_t(MemoryLayout<sockaddr_in>.size)
                let got = buffer.withUnsafeMutableBytes { raw in
                    withUnsafeMutablePointer(to: &from) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(s, raw.baseAddress, raw.count, 0, $0, &fromLen) }
                    }
                }
                if got <= 0 { break }
                respond(s, packet: Array(buffer[0..<got]), from: from)
            }
        }
        announce(s, ttl: 0)  // goodbye
    }

    private func announce(_ s: Int32, ttl: UInt32?) {
        var records = answers(for: service.serviceTypes.map { Q(name: typeName($0), type: 12) })
        records += additionals(excluding: records)
        if let ttl { records = records.map { var r = $0; r.ttl = ttl; return r } }
        if let packet = try? encode(records: records, id: 0, questions: [], ttlCap: nil) {
            send(s, packet, to: nil)
        }
    }

    private func respond(_ s: Int32, packet: [UInt8], from: sockaddr_in) {
        guard let (id, flags, questions) = Self.decodeQuery(packet), flags & 0x8000 == 0, !questions.isEmpty else { return }
        let records = answers(for: questions)
        guard !records.isEmpty else { return }
        let all = records + additionals(excluding: records)
        let legacy = UInt16(bigEndian: from.sin_port) != 5353
        if legacy {
            guard let reply = try? encode(records: all, id: id, questions: questions, ttlCap: 10) else { return }
            send(s, reply, to: from)
        } else {
            guard let reply = try? encode(records: all, id: 0, questions: [], ttlCap: nil) else { return }
            send(s, reply, to: nil)
        }
    }

    private func send(_ s: Int32, _ packet: [UInt8], to: sockaddr_in?) {
        var dest = to ?? {
            var d = sockaddr_in()
            d.sin_family = sa_family_t(AF_INET)
            d.sin_port = in_port_t(5353).bigEndian
            d.sin_addr = Self.group
            return d
        }()
        _ = packet.withUnsafeBytes { raw in
            withUnsafePointer(to: &dest) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(s, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    // MARK: Records

    /// A question: lowercased labels, type, and the labels as sent (echoed in legacy replies).
    struct Q {
        var name: [String]
        var type: UInt16
        var key: [String] { name.map { $0.lowercased() } }
    }

    struct Record {
        var name: [String]
        var type: UInt16
        var cacheFlush: Bool
        var ttl: UInt32
        var rdata: RData
    }

    enum RData {
        case name([String])
        case srv(UInt16, [String])
        case txt([[UInt8]])
        case a([UInt8])
    }

    private func typeName(_ t: String) -> [String] { t.split(separator: ".").map(String.init) + ["local"] }
    private var hostLabels: [String] { [service.hostName, "local"] }
    private func instanceName(_ t: String) -> [String] { [service.instanceName] + typeName(t) }
    private static func lower(_ l: [String]) -> [String] { l.map { $0.lowercased() } }

    private func srvRecord(_ t: String) -> Record {
        Record(name: instanceName(t), type: 33, cacheFlush: true, ttl: 120, rdata: .srv(service.port, hostLabels))
    }

    private func txtRecord(_ t: String) -> Record {
        let strings = service.txt.filter { !$0.1.isEmpty }.map { Array("\($0.0)=\($0.1)".utf8) }
        return Record(name: instanceName(t), type: 16, cacheFlush: true, ttl: 4500, rdata: .txt(strings.isEmpty ? [[]] : strings))
    }

    private func aRecords() -> [Record] {
        service.addresses.compactMap { Self.parseIPv4($0) }.map { a in
            let v = UInt32(bigEndian: a.s_addr)
            return Record(name: hostLabels, type: 1, cacheFlush: true, ttl: 120,
                          rdata: .a([UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]))
        }
    }

    /// The answers to `questions` (type 255 = ANY).
    func answers(for questions: [Q]) -> [Record] {
        var out: [Record] = []
        let metaQuery = ["_services", "_dns-sd", "_udp", "local"]
        for q in questions {
            let any = q.type == 255
            if q.key == metaQuery && (q.type == 12 || any) {
                for t in service.serviceTypes {
                    out.append(Record(name: metaQuery, type: 12, cacheFlush: false, ttl: 4500, rdata: .name(typeName(t))))
                }
            }
            for t in service.serviceTypes {
                if q.key == Self.lower(typeName(t)) && (q.type == 12 || any) {
                    out.append(Record(name: typeName(t), type: 12, cacheFlush: false, ttl: 4500, rdata: .name(instanceName(t))))
                }
                if q.key == Self.lower(instanceName(t)) {
                    if q.type == 33 || any { out.append(srvRecord(t)) }
                    if q.type == 16 || any { out.append(txtRecord(t)) }
                }
            }
            if q.key == Self.lower(hostLabels) && (q.type == 1 || any) { out += aRecords() }
        }
        return out
    }

    /// SRV/TXT of every instance a PTR answer names, and the A records, unless already answers.
    private func additionals(excluding answers: [Record]) -> [Record] {
        var out: [Record] = []
        let has = { (name: [String], type: UInt16) in
            (answers + out).contains { Self.lower($0.name) == Self.lower(name) && $0.type == type }
        }
        for r in answers where r.type == 12 {
            for t in service.serviceTypes {
                guard case .name(let target) = r.rdata, Self.lower(target) == Self.lower(instanceName(t)) else { continue }
                if !has(instanceName(t), 33) { out.append(srvRecord(t)) }
                if !has(instanceName(t), 16) { out.append(txtRecord(t)) }
            }
        }
        if (answers + out).contains(where: { $0.type == 33 }) && !has(hostLabels, 1) { out += aRecords() }
        return out
    }

    // MARK: Wire format (own small encoder/decoder; no shared code with SignalKKit)

    struct EncodeError: Error {}

    func encode(records: [Record], id: UInt16, questions: [Q], ttlCap: UInt32?) throws -> [UInt8] {
        var b: [UInt8] = []
        var offsets: [[String]: Int] = [:]
        func u16(_ v: UInt16) { b += [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func u32(_ v: UInt32) { b += [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func name(_ labels: [String]) throws {
            let key = Self.lower(labels)
            for i in labels.indices {
                if let off = offsets[Array(key[i...])] { u16(0xC000 | UInt16(off)); return }
                let utf8 = Array(labels[i].utf8)
                guard !utf8.isEmpty, utf8.count <= 63 else { throw EncodeError() }
                if b.count < 0x3FFF { offsets[Array(key[i...])] = b.count }
                b.append(UInt8(utf8.count))
                b += utf8
            }
            b.append(0)
        }
        u16(id)
        u16(0x8400)  // response, authoritative
        u16(UInt16(questions.count)); u16(UInt16(records.count)); u16(0); u16(0)
        for q in questions {
            try name(q.name)
            u16(q.type)
            u16(1)
        }
        for r in records {
            try name(r.name)
            u16(r.type)
            u16(1 | (r.cacheFlush && ttlCap == nil ? 0x8000 : 0))
            u32(ttlCap.map { min($0, r.ttl) } ?? r.ttl)
            let lengthAt = b.count
            u16(0)
            let start = b.count
            switch r.rdata {
            case .name(let n): try name(n)
            case .srv(let port, let target):
                u16(0); u16(0); u16(port)
                try name(target)
            case .txt(let strings):
                for s in strings {
                    guard s.count <= 255 else { throw EncodeError() }
                    b.append(UInt8(s.count))
                    b += s
                }
            case .a(let bytes): b += bytes
            }
            let length = b.count - start
            b[lengthAt] = UInt8(length >> 8)
            b[lengthAt + 1] = UInt8(length & 0xFF)
        }
        return b
    }

    /// Header id, flags and questions of a packet, or nil when malformed (never traps).
    static func decodeQuery(_ p: [UInt8]) -> (UInt16, UInt16, [Q])? {
        guard p.count >= 12 else { return nil }
        func u16(_ i: Int) -> UInt16 { UInt16(p[i]) << 8 | UInt16(p[i + 1]) }
        let qd = Int(u16(4))
        var pos = 12
        var questions: [Q] = []
        for _ in 0..<qd {
            var labels: [String] = []
            var cursor = pos
            var resume: Int? = nil
            var limit = pos  // pointers must go strictly backwards
            var total = 0
            while true {
                guard cursor < p.count else { return nil }
                let len = Int(p[cursor])
                if len == 0 { cursor += 1; break }
                if len & 0xC0 == 0xC0 {
                    guard cursor + 1 < p.count else { return nil }
                    let target = (len & 0x3F) << 8 | Int(p[cursor + 1])
                    guard target < limit else { return nil }
                    if resume == nil { resume = cursor + 2 }
                    limit = target
                    cursor = target
                    continue
                }
                guard len & 0xC0 == 0, cursor + 1 + len <= p.count else { return nil }
                total += len + 1
                guard total <= 255 else { return nil }
                labels.append(String(decoding: p[(cursor + 1)..<(cursor + 1 + len)], as: UTF8.self))
                cursor += 1 + len
            }
            pos = resume ?? cursor
            guard pos + 4 <= p.count else { return nil }
            questions.append(Q(name: labels, type: u16(pos)))
            pos += 4
        }
        return (u16(0), u16(2), questions)
    }

    // MARK: POSIX helpers

    #if canImport(Glibc)
    private static let sockDgram = Int32(SOCK_DGRAM.rawValue)
    #else
    private static let sockDgram = SOCK_DGRAM
    #endif
    private static let ipproto = Int32(IPPROTO_IP)
    private static let group = in_addr(s_addr: UInt32(0xE00000FB).bigEndian)

    private static func posix(_ call: String) -> StartError {
        let e = errno
        return StartError(description: "mDNS advertiser: \(call) failed: \(String(cString: strerror(e))) (errno \(e))")
    }

    private static func setInt(_ fd: Int32, _ level: Int32, _ option: Int32, _ value: Int32, _ name: String) throws {
        var v = value
        guard setsockopt(fd, level, option, &v, socklen_t(MemoryLayout<Int32>.size)) == 0 else { throw posix("setsockopt(\(name))") }
    }

    private static func parseIPv4(_ s: String) -> in_addr? {
        var a = in_addr()
        return inet_pton(AF_INET, s, &a) == 1 ? a : nil
    }
}
