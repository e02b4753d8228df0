import Foundation
import LookoutSim
import LookoutTestSupport
import SignalKKit
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// mDNS / DNS-SD discovery: the DNS codec on hand-made packets, and interop over loopback
/// multicast (224.0.0.251:5353 via 127.0.0.1; nothing leaves the machine) with python-zeroconf
/// in a throwaway venv, in both directions, plus our browser against the simulator's advertiser.
final class DiscoveryTests: XCTestCase {
    static let venv = PythonVenv(label: "python-zeroconf mDNS interop", packages: ["zeroconf"])

    override class func tearDown() {
        venv.removeWorkDirectory()
        super.tearDown()
    }

    // MARK: - Codec (hand-made packets)

    /// A response as signalk-server/zeroconf sends it, built byte by byte, with compression
    /// pointers in owner names, PTR data and the SRV target.
    static let handMadeResponse: [UInt8] = {
        var p: [UInt8] = [0x00, 0x00, 0x84, 0x00, 0, 0, 0, 1, 0, 0, 0, 3]
        // answer: _signalk-ws._tcp.local PTR "Spike Server._signalk-ws._tcp.local"
        let typeAt = p.count  // 12
        p += [11] + Array("_signalk-ws".utf8) + [4] + Array("_tcp".utf8) + [5] + Array("local".utf8) + [0]
        let localAt = typeAt + 12 + 5  // offset of "local"
        p += [0, 12, 0, 1, 0, 0, 0x11, 0x94]  // PTR IN ttl 4500
        let instanceLabel = [UInt8(12)] + Array("Spike Server".utf8)
        p += [0, UInt8(instanceLabel.count + 2)]
        let instanceAt = p.count
        p += instanceLabel + [0xC0, UInt8(typeAt)]
        // additional: SRV (owner: pointer to the instance name), target spike.local (pointer to local)
        p += [0xC0, UInt8(instanceAt), 0, 33, 0x80, 1, 0, 0, 0, 120]
        let target = [UInt8(5)] + Array("spike".utf8) + [0xC0, UInt8(localAt)]
        p += [0, UInt8(6 + target.count), 0, 0, 0, 0, 0x0B, 0xB8]  // prio 0, weight 0, port 3000
        let hostAt = p.count
        p += target
        // additional: TXT
        let txt: [[UInt8]] = ["txtvers=1", "roles=master, main", "self=vessels.urn:mrn:imo:mmsi:230099999", "flag"].map { Array($0.utf8) }
        let txtData = txt.flatMap { [UInt8($0.count)] + $0 }
        p += [0xC0, UInt8(instanceAt), 0, 16, 0x80, 1, 0, 0, 0x11, 0x94, 0, UInt8(txtData.count)] + txtData
        // additional: A spike.local 192.168.1.10
        p += [0xC0, UInt8(hostAt), 0, 1, 0x80, 1, 0, 0, 0, 120, 0, 4, 192, 168, 1, 10]
        return p
    }()

    func testDecodesHandMadeResponseWithCompression() throws {
        let m = try MDNSMessage.decode(Self.handMadeResponse)
        XCTAssertTrue(m.isResponse)
        XCTAssertEqual(m.answers.count, 1)
        XCTAssertEqual(m.additionals.count, 3)
        let instance = MDNSName(labels: ["Spike Server", "_signalk-ws", "_tcp", "local"])
        XCTAssertEqual(m.answers[0].name, "_signalk-ws._tcp.local.")
        XCTAssertEqual(m.answers[0].data, .ptr(instance))
        XCTAssertEqual(m.answers[0].ttl, 4500)
        XCTAssertEqual(m.additionals[0].name, instance)
        XCTAssertTrue(m.additionals[0].cacheFlush)
        XCTAssertEqual(m.additionals[0].recordClass, 1)
        XCTAssertEqual(m.additionals[0].data, .srv(priority: 0, weight: 0, port: 3000, target: "spike.local"))
        let txt = m.additionals[1].data.txtDictionary
        XCTAssertEqual(txt["roles"], "master, main")
        XCTAssertEqual(txt["txtvers"], "1")
        XCTAssertEqual(txt["flag"], "")
        XCTAssertEqual(m.additionals[2].name, "SPIKE.local")  // case-insensitive names
        XCTAssertEqual(m.additionals[2].data, .a([192, 168, 1, 10]))
        XCTAssertEqual(instance.description, "Spike Server._signalk-ws._tcp.local.")
    }

    func testEncodeCompressesAndRoundTrips() throws {
        let type: MDNSName = "_signalk-ws._tcp.local"
        let instance = MDNSName(instance: "Boat.With.Dots", service: type)
        let m = MDNSMessage(id: 7, flags: 0x8400, questions: [MDNSQuestion(name: type, type: MDNSRecordType.ptr, unicastResponse: true)],
                            answers: [.ptr(type, to: instance)],
                            additionals: [.srv(instance, port: 3000, target: "boat.local"),
                                          .txt(instance, [("txtvers", "1"), ("roles", "master, main")]),
                                          .a("boat.local", [127, 0, 0, 1]),
                                          MDNSRecord(name: "boat.local", type: MDNSRecordType.aaaa, ttl: 5,
                                                     data: .aaaa(Array(repeating: 0, count: 15) + [1])),
                                          MDNSRecord(name: "boat.local", type: MDNSRecordType.nsec, ttl: 5, data: .other([1, 2, 3]))])
        let bytes = try m.encode()
        XCTAssertEqual(try MDNSMessage.decode(bytes), m)
        // "_signalk-ws._tcp.local" appears once; everything after points back to it.
        let needle = Array("_signalk-ws".utf8)
        let occurrences = (0...(bytes.count - needle.count)).filter { Array(bytes[$0..<($0 + needle.count)]) == needle }.count
        XCTAssertEqual(occurrences, 1)
        XCTAssertTrue(bytes.contains(0xC0))
        // An instance label with dots stays one label.
        XCTAssertEqual(try MDNSMessage.decode(bytes).answers[0].data, .ptr(MDNSName(labels: ["Boat.With.Dots", "_signalk-ws", "_tcp", "local"])))
    }

    func testEncodeRejectsBadLabels() {
        let long = String(repeating: "x", count: 64)
        XCTAssertThrowsError(try MDNSMessage.query([MDNSQuestion(name: MDNSName(labels: [long, "local"]), type: 12)]).encode()) {
            XCTAssertEqual($0 as? MDNSError, .invalidLabel(long))
        }
        let big = [UInt8](repeating: 0x61, count: 256)
        XCTAssertThrowsError(try MDNSMessage(answers: [MDNSRecord(name: "a.local", type: 16, ttl: 1, data: .txt([big]))]).encode()) {
            XCTAssertEqual($0 as? MDNSError, .txtStringTooLong(256))
        }
    }

    func testMalformedPacketsThrow() {
        let header: [UInt8] = [0, 0, 0x84, 0, 0, 1, 0, 0, 0, 0, 0, 0]  // one question
        func expect(_ bytes: [UInt8], _ check: (MDNSError) -> Bool, line: UInt = #line) {
            XCTAssertThrowsError(try MDNSMessage.decode(bytes), line: line) { e in
                guard let e = e as? MDNSError else { return XCTFail("not an MDNSError: \(e)", line: line) }
                XCTAssertTrue(check(e), "\(e)", line: line)
                XCTAssertFalse(e.description.isEmpty)
            }
        }
        // A pointer to itself, and a forward pointer: loops are refused.
        expect(header + [0xC0, 12, 0, 12, 0, 1]) { if case .badCompressionPointer(12, 12) = $0 { true } else { false } }
        expect(header + [0xC0, 14, 0, 12, 0, 1]) { if case .badCompressionPointer = $0 { true } else { false } }
        // label "a" then a pointer back to the start of the same name (a loop).
        expect(header + [1, 0x61, 0xC0, 12, 0, 12, 0, 1]) { if case .badCompressionPointer = $0 { true } else { false } }
        // Reserved label types.
        expect(header + [0x40, 0, 0, 12, 0, 1]) { if case .badLabelType(12, 0x40) = $0 { true } else { false } }
        expect(header + [0x80, 0, 0, 12, 0, 1]) { if case .badLabelType = $0 { true } else { false } }
        // A label running past the end; a missing terminator; header too short.
        expect(header + [10, 0x61]) { if case .truncated = $0 { true } else { false } }
        expect(header + [1, 0x61]) { if case .truncated = $0 { true } else { false } }
        expect([0, 0, 0x84]) { if case .truncated(let f, 2) = $0 { f == "header flags" } else { false } }
        // A name longer than 255 bytes.
        let longName: [UInt8] = (0..<5).flatMap { (_: Int) -> [UInt8] in [60] + [UInt8](repeating: 0x61, count: 60) } + [0]
        expect(header + longName + [0, 12, 0, 1]) { if case .nameTooLong = $0 { true } else { false } }
        // Records: A with 3 bytes, TXT string past its record, SRV too short, rdlength past the end.
        let rr: ([UInt8], [UInt8]) -> [UInt8] = { typeAndClass, data in
            [0, 0, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0x61, 0] + typeAndClass + [0, 0, 0, 1, 0, UInt8(data.count)] + data
        }
        expect(rr([0, 1, 0, 1], [1, 2, 3])) { if case .badRecordData(1, _, _) = $0 { true } else { false } }
        expect(rr([0, 16, 0, 1], [5, 0x61])) { if case .badRecordData(16, _, _) = $0 { true } else { false } }
        expect(rr([0, 33, 0, 1], [0, 0, 0, 0])) { if case .badRecordData(33, _, _) = $0 { true } else { false } }
        expect(rr([0, 28, 0, 1], [1, 2])) { if case .badRecordData(28, _, _) = $0 { true } else { false } }
        expect(Array(rr([0, 1, 0, 1], [1, 2, 3, 4]).dropLast(2))) { if case .truncated = $0 { true } else { false } }
        // PTR whose name is shorter than the declared length.
        expect(rr([0, 12, 0, 1], [1, 0x62, 0, 0])) { if case .badRecordData(12, _, _) = $0 { true } else { false } }
    }

    /// Every prefix and many corruptions of the hand-made packet decode or throw; nothing traps.
    func testTruncationsAndCorruptionsNeverTrap() {
        let p = Self.handMadeResponse
        var decoded = 0, thrown = 0
        func attempt(_ bytes: [UInt8]) {
            do { _ = try MDNSMessage.decode(bytes); decoded += 1 } catch is MDNSError { thrown += 1 } catch {
                XCTFail("unexpected error \(error)")
            }
        }
        for n in 0..<p.count { attempt(Array(p[..<n])) }
        for i in p.indices {
            for v: UInt8 in [0x00, 0x01, 0x3F, 0x40, 0x80, 0xC0, 0xC1, 0xFF] {
                var b = p
                b[i] = v
                attempt(b)
            }
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var b = p
            for _ in 0..<3 { b[Int.random(in: 0..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            attempt(b)
            attempt((0..<Int.random(in: 0..<64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
        XCTAssertGreaterThan(thrown, p.count)
        XCTAssertGreaterThan(decoded, 0)
    }

    func testServiceDerivedValues() {
        var s = SignalKService(name: "Spike", type: "_signalk-ws._tcp", host: "spike.local", port: 3000,
                               addresses: ["fe80::1", "192.168.1.10"],
                               txt: ["roles": "master, main", "self": "vessels.urn:mrn:imo:mmsi:230099999"])
        XCTAssertEqual(s.roles, ["master", "main"])
        XCTAssertEqual(s.selfURN, "urn:mrn:imo:mmsi:230099999")
        XCTAssertEqual(s.url?.absoluteString, "ws://192.168.1.10:3000/signalk/v1/stream")
        XCTAssertEqual(s.discoveryURL?.absoluteString, "http://192.168.1.10:3000/signalk")
        s.type = "_signalk-https._tcp"
        s.addresses = ["fe80::1"]
        XCTAssertTrue(s.isTLS)
        XCTAssertEqual(s.url?.absoluteString, "https://[fe80::1]:3000/signalk/v1/api/")
        s.addresses = []
        XCTAssertEqual(s.discoveryURL?.absoluteString, "https://spike.local:3000/signalk")
    }

    // MARK: - Loopback multicast

    func testBrowseOnEmptyInterfaceListIsAClearError() async {
        do {
            _ = try await SignalKDiscovery.browse(timeout: .milliseconds(100), interfaces: [])
            XCTFail("expected an error")
        } catch let e as MDNSError {
            XCTAssertEqual(e, .noInterfaces("the interface list is empty"))
        } catch { XCTFail("\(error)") }
    }

    /// A cancelled browse ends with `CancellationError` long before its own (hour-long) timeout.
    func testCancellationStopsBrowseAtOnce() async throws {
        let started = ContinuousClock.now
        let task = Task { try await SignalKDiscovery.browse(timeout: .seconds(3600), interfaces: [.loopback]) }
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("expected CancellationError")
        } catch is CancellationError {} catch { XCTFail("\(error)") }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(600), "cancelled, not timed out")
        // Cancel while the browse thread is waiting in poll.
        let t2 = Task { try await SignalKDiscovery.browse(timeout: .seconds(3600), interfaces: [.loopback]) }
        // Let it reach poll: a short bounded browse is the delay (no sleep).
        _ = try await SignalKDiscovery.browse(timeout: .milliseconds(300), interfaces: [.loopback])
        let cancelAt = ContinuousClock.now
        t2.cancel()
        do {
            _ = try await t2.value
            XCTFail("expected CancellationError")
        } catch is CancellationError {} catch { XCTFail("\(error)") }
        XCTAssertLessThan(ContinuousClock.now - cancelAt, .seconds(600), "cancelled, not timed out")
    }

    /// Browses (finished and cancelled) and advertiser start/stop leave no socket open.
    func testNoSocketLeaks() async throws {
        try Self.requireLoopbackMulticast()
        let before = Self.openSockets()
        _ = try await SignalKDiscovery.browse(timeout: .milliseconds(200), interfaces: [.loopback])
        let t = Task { try await SignalKDiscovery.browse(timeout: .seconds(30), interfaces: [.loopback]) }
        t.cancel()
        _ = try? await t.value
        do {
            _ = try await SignalKDiscovery.browse(timeout: .milliseconds(100), interfaces: [MDNSInterface(name: "bogus", address: "not-an-ip")])
            XCTFail("expected sendFailed")
        } catch let e as MDNSError {
            guard case .sendFailed(let detail) = e else { return XCTFail("\(e)") }
            XCTAssertTrue(detail.contains("bogus"), detail)
        }
        let ad = SignalKMDNSAdvertiser(service: .init(instanceName: "Leak Check", port: 1))
        try Self.startOrSkip(ad)
        ad.stop()
        ad.stop()
        XCTAssertEqual(Self.openSockets(), before)
    }

    /// Our browser finds the simulator's advertiser (no Python needed).
    func testBrowserFindsSimulatorAdvertiser() async throws {
        try Self.requireLoopbackMulticast()
        let name = "Lookout Sim \(UUID().uuidString.prefix(8))"
        let ad = SignalKMDNSAdvertiser(service: .init(instanceName: name, hostName: "lookout-sim-\(UUID().uuidString.prefix(8).lowercased())", port: 3123))
        try Self.startOrSkip(ad)
        defer { ad.stop() }
        let started = ContinuousClock.now
        let found = try await SignalKDiscovery.browse(timeout: .seconds(2), interfaces: [.loopback]).filter { $0.name == name }
        print("mDNS: browse of the advertiser took \(ContinuousClock.now - started), found \(found.count)")
        XCTAssertEqual(Set(found.map(\.type)), ["_signalk-ws._tcp", "_signalk-http._tcp"])
        for s in found {
            XCTAssertEqual(s.port, 3123)
            XCTAssertEqual(s.addresses, ["127.0.0.1"])
            XCTAssertEqual(s.roles, ["master", "main"])
            XCTAssertEqual(s.txt["txtvers"], "1")
            XCTAssertEqual(s.selfURN, "urn:mrn:imo:mmsi:230099999")
        }
        XCTAssertEqual(found.first { $0.type == "_signalk-ws._tcp" }?.url?.absoluteString, "ws://127.0.0.1:3123/signalk/v1/stream")
    }

    /// A python-zeroconf registration (on 127.0.0.1) is found by our browser.
    func testBrowserFindsPythonZeroconfRegistration() async throws {
        try Self.requireLoopbackMulticast()
        let (python, dir) = try Self.venv.pythonOrSkip()
        let script = dir.appendingPathComponent("register.py")
        try Self.registerScript.write(to: script, atomically: true, encoding: .utf8)
        let name = "Py Boat \(UUID().uuidString.prefix(8))"
        let child = try LineProcess(python, [script.path, name, "3456"])
        defer { child.finish() }
        let ready = try await child.firstLine(timeout: 30)
        guard ready == "ready" else {
            throw skipTest("python-zeroconf interop not run: registration did not start (\(ready ?? "no output"); \(child.stderrTail()))")
        }
        let started = ContinuousClock.now
        let found = try await SignalKDiscovery.browse(timeout: .seconds(3), interfaces: [.loopback]).filter { $0.name == name }
        print("mDNS: browse of the python-zeroconf registration took \(ContinuousClock.now - started)")
        XCTAssertEqual(found.count, 1, "\(found)")
        let s = try XCTUnwrap(found.first)
        XCTAssertEqual(s.type, "_signalk-ws._tcp")
        XCTAssertEqual(s.port, 3456)
        XCTAssertTrue(s.host.hasPrefix("pyboat-"), s.host)
        XCTAssertEqual(s.addresses, ["127.0.0.1"])
        XCTAssertEqual(s.txt["roles"], "master, main")
        XCTAssertEqual(s.txt["swname"], "signalk-server")
        XCTAssertEqual(s.selfURN, "urn:mrn:imo:mmsi:211111111")
        XCTAssertEqual(s.url?.absoluteString, "ws://127.0.0.1:3456/signalk/v1/stream")
    }

    /// The simulator's advertisement is found and resolved by python-zeroconf's browser.
    func testPythonZeroconfBrowserFindsSimulatorAdvertiser() async throws {
        try Self.requireLoopbackMulticast()
        let (python, dir) = try Self.venv.pythonOrSkip()
        let script = dir.appendingPathComponent("browse.py")
        try Self.browseScript.write(to: script, atomically: true, encoding: .utf8)
        let name = "Lookout Sim \(UUID().uuidString.prefix(8))"
        let ad = SignalKMDNSAdvertiser(service: .init(instanceName: name, hostName: "lookout-sim-\(UUID().uuidString.prefix(8).lowercased())",
                                                      port: 3124, txt: SignalKMDNSAdvertiser.signalKTXT(vesselName: "Sim Boat")))
        try Self.startOrSkip(ad)
        defer { ad.stop() }
        let started = ContinuousClock.now
        let r = try await PythonVenv.runOffPool(python, [script.path, "_signalk-ws._tcp.local.", name, "8"],
                                                timeout: 30, threadName: "zeroconf browse")
        print("mDNS: python-zeroconf browse of the advertiser took \(ContinuousClock.now - started)")
        XCTAssertTrue(r.succeeded, r.summary)
        let out = try XCTUnwrap(JSONSerialization.jsonObject(with: r.stdout) as? [String: Any], String(decoding: r.stdout, as: UTF8.self))
        XCTAssertEqual(out["name"] as? String, "\(name)._signalk-ws._tcp.local.")
        XCTAssertEqual(out["port"] as? Int, 3124)
        XCTAssertEqual(out["addresses"] as? [String], ["127.0.0.1"])
        XCTAssertEqual((out["server"] as? String)?.hasPrefix("lookout-sim-"), true)
        let txt = try XCTUnwrap(out["txt"] as? [String: String])
        XCTAssertEqual(txt, ["txtvers": "1", "swname": "signalk-server", "swvers": "2.31.1", "roles": "master, main",
                             "self": "urn:mrn:imo:mmsi:230099999", "vname": "Sim Boat"])
    }

    // MARK: - Helpers

    /// Socket fds of this process (from /proc/self/fd), or nil where there is no /proc.
    static func openSockets() -> Int? {
        guard let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        return fds.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))?.hasPrefix("socket:") == true }.count
    }

    /// Whether a multicast query sent via 127.0.0.1 reaches a socket that joined 224.0.0.251 on
    /// 127.0.0.1 (checked once): nil when it does, else why not.
    static let loopbackMulticastProblem: String? = probeLoopbackMulticast()

    static func requireLoopbackMulticast() throws {
        if let problem = loopbackMulticastProblem {
            print("mDNS loopback interop not run: \(problem)")
            throw skipTest("mDNS loopback interop not run: \(problem)")
        }
    }

    /// Linux delivers loopback multicast without the MULTICAST flag on lo (measured, stack-notes §5),
    /// so no setup is needed here; where it is not delivered the interop tests skip with this reason
    /// (fix: `ip link set lo multicast on`, or run in a network namespace).
    private static func probeLoopbackMulticast() -> String? {
        #if canImport(Glibc)
        let sockDgram = Int32(SOCK_DGRAM.rawValue)
        #else
        let sockDgram = SOCK_DGRAM
        #endif
        let rx = socket(AF_INET, sockDgram, 0), tx = socket(AF_INET, sockDgram, 0)
        defer { if rx >= 0 { close(rx) }; if tx >= 0 { close(tx) } }
        guard rx >= 0, tx >= 0 else { return "socket() failed: errno \(errno)" }
        var one: Int32 = 1
        setsockopt(rx, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(rx, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(5353).bigEndian
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(rx, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { return "cannot bind UDP 0.0.0.0:5353 (errno \(errno)); another responder without SO_REUSEPORT?" }
        var group = in_addr(), lo = in_addr()
        inet_pton(AF_INET, "224.0.0.251", &group)
        inet_pton(AF_INET, "127.0.0.1", &lo)
        var mreq = ip_mreq(imr_multiaddr: group, imr_interface: lo)
        guard setsockopt(rx, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &mreq, socklen_t(MemoryLayout<ip_mreq>.size)) == 0 else {
            return "cannot join 224.0.0.251 on 127.0.0.1 (errno \(errno))"
        }
        guard setsockopt(tx, Int32(IPPROTO_IP), IP_MULTICAST_IF, &lo, socklen_t(MemoryLayout<in_addr>.size)) == 0 else {
            return "IP_MULTICAST_IF 127.0.0.1 refused (errno \(errno))"
        }
        let probe = "_lookout-probe-\(UUID().uuidString.prefix(8).lowercased())"
        guard let packet = try? MDNSMessage.query([MDNSQuestion(name: MDNSName(labels: [probe, "_tcp", "local"]), type: 12)]).encode() else {
            return "cannot encode the probe"
        }
        var dest = sockaddr_in()
        dest.sin_family = sa_family_t(AF_INET)
        dest.sin_port = in_port_t(5353).bigEndian
        dest.sin_addr = group
        let sent = packet.withUnsafeBytes { raw in
            withUnsafePointer(to: &dest) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(tx, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard sent == packet.count else { return "sendto 224.0.0.251:5353 via 127.0.0.1 failed (errno \(errno)); no multicast route on lo?" }
        let deadline = Date().addingTimeInterval(2)
        var buffer = [UInt8](repeating: 0, count: 9000)
        while Date() < deadline {
            var pfd = pollfd(fd: rx, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000))) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { recv(rx, $0.baseAddress, $0.count, 0) }
            if n > 0, let m = try? MDNSMessage.decode(Array(buffer[0..<n])), m.questions.first?.name.labels.first == probe {
                return nil
            }
        }
        return "a multicast packet sent via 127.0.0.1 was not delivered back within 2 s (lo needs `ip link set lo multicast on`, or a network namespace)"
    }

    static func startOrSkip(_ ad: SignalKMDNSAdvertiser) throws {
        do { try ad.start() } catch {
            throw skipTest("mDNS advertiser could not start on loopback (needs UDP 5353 with SO_REUSEPORT and a multicast join on 127.0.0.1): \(error)")
        }
    }

    static let registerScript = """
    import socket, sys
    from zeroconf import IPVersion, ServiceInfo, Zeroconf
    name, port = sys.argv[1], int(sys.argv[2])
    zc = Zeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
    stype = "_signalk-ws._tcp.local."
    host = "pyboat-" + "".join(c for c in name.lower() if c.isalnum())[-8:] + ".local."
    info = ServiceInfo(stype, f"{name}.{stype}", addresses=[socket.inet_aton("127.0.0.1")], port=port, server=host,
                       properties={"txtvers": "1", "swname": "signalk-server", "swvers": "2.31.1",
                                   "roles": "master, main", "self": "urn:mrn:imo:mmsi:211111111"})
    zc.register_service(info)
    print("ready", flush=True)
    sys.stdin.read()
    zc.unregister_service(info)
    zc.close()
    """

    static let browseScript = """
    import json, socket, sys, threading
    from zeroconf import IPVersion, ServiceBrowser, ServiceListener, Zeroconf
    stype, want, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
    zc = Zeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
    found, names = threading.Event(), []
    class L(ServiceListener):
        def add_service(self, zc, t, n):
            if n.startswith(want + "."):
                names.append(n); found.set()
        def update_service(self, zc, t, n): self.add_service(zc, t, n)
        def remove_service(self, zc, t, n): pass
    browser = ServiceBrowser(zc, stype, L())
    try:
        if not found.wait(limit):
            print("not found within", limit, "s", file=sys.stderr); sys.exit(2)
        info = zc.get_service_info(stype, names[0], timeout=int(limit * 1000))
        if info is None:
            print("found but not resolved", file=sys.stderr); sys.exit(3)
        txt = {k.decode(): (v.decode() if v is not None else None) for k, v in info.properties.items()}
        print(json.dumps({"name": info.name, "port": info.port, "server": info.server,
                          "addresses": [socket.inet_ntoa(a) for a in info.addresses], "txt": txt}))
    finally:
        browser.cancel(); zc.close()
    """
}

// MARK: - Child processes (the venv itself is LookoutTestSupport.PythonVenv)

/// A child process: either run to completion (`run`), or kept alive while a test talks to it
/// (`init` … `firstLine` … `finish`, which closes stdin and waits, SIGKILL after 10 s).
final class LineProcess: @unchecked Sendable {
    // @unchecked Sendable: `process`/pipes are set in init; `stderrData` is guarded by `lock`.

    private let process = Process()
    private let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    private let lock = NSLock()
    private var stderrData = Data()
    private let stderrDone = DispatchSemaphore(value: 0)

    init(_ executable: URL, _ arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let handle = stderr.fileHandleForReading
        Thread { [self] in
            let d = handle.readDataToEndOfFile()
            lock.withLock { stderrData = d }
            stderrDone.signal()
        }.start()
    }

    /// The first stdout line (without newline), or nil at EOF/timeout (then the child is killed).
    func firstLine(timeout: TimeInterval) async throws -> String? {
        let handle = stdout.fileHandleForReading
        let pid = process.processIdentifier
        let killer = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        defer { killer.cancel() }
        return await withCheckedContinuation { (cont: CheckedContinuation<String?, Never>) in
            Thread {
                var line = Data()
                while true {
                    let d = handle.readData(ofLength: 1)
                    if d.isEmpty { cont.resume(returning: nil); return }
                    if d.first == 0x0A { cont.resume(returning: String(decoding: line, as: UTF8.self)); return }
                    line += d
                }
            }.start()
        }
    }

    func stderrTail() -> String {
        String(decoding: lock.withLock { stderrData }.suffix(800), as: UTF8.self)
    }

    /// Closes stdin (the script then unregisters and exits) and waits; SIGKILL after 10 s.
    func finish() {
        try? stdin.fileHandleForWriting.close()
        let pid = process.processIdentifier
        let killer = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 10, execute: killer)
        process.waitUntilExit()
        killer.cancel()
        stderrDone.wait()
        try? stdout.fileHandleForReading.close()
    }
}
