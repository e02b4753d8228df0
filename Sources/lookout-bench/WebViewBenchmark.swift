import Foundation
import LookoutAutomation
import LookoutConfig
import LookoutModules
import LookoutSim
import LookoutStore
import LookoutWire

#if canImport(Glibc)
import Glibc
#endif

/// P11: the web view of `serve` (issue 28) over loopback, served in this process by the status
/// server with its web routes against the Nightscout simulator holding a day of readings: the
/// bytes of a first load (page, stylesheet, script, icon), the time of that load (median), and
/// the time from a new reading in Nightscout to the page's live stream carrying it. The anchor
/// is `GET /status` (the JSON health document) on the same server.
struct WebViewBenchmark: Benchmark {
    let id = "P11"
    let summary = "web view: page weight, first load on loopback, new reading to page (server-sent events)"

    func run(_ settings: BenchSettings) async throws -> BenchReport {
        var report = BenchReport(id: id, title: "the web view's first load and live latency over loopback")
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-bench-p11-\(getpid())").path
        try FileManager.default.createDirectory(atPath: home + "/state", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }

        let simulator = NightscoutSimulator()
        let base = try await simulator.start()
        defer { Task { await simulator.stop() } }
        let token = await simulator.addSubject(name: "bench", roles: ["admin"])
        await simulator.fill(days: 1, scenarios: [.overnightLow])
        let paths = LookoutPaths(configFile: home + "/config.toml", stateDirectory: home + "/state")
        try """
            [nightscout.home]
            url = "\(base.absoluteString)"
            token_env = "NS_TOKEN"
            """.write(toFile: paths.configFile, atomically: true, encoding: .utf8)
        let config = try HostConfig.load(paths: paths)
        let health = HealthRegistry()
        for name in ["low-alert.lua", "nightscout-to-signalk.lua", "signalk-to-nightscout.lua"] {
            health.updateScript(name) { $0.state = .running; $0.lastSuccess = Date() }
        }
        let sessions = WebSessions(stateDirectory: paths.stateDirectory)
        guard let opened = try sessions.redeem(code: try sessions.makeLoginCode()) else { throw BenchFailure("no session") }
        let cookie = "\(WebSessions.cookieName)=\(opened.token)"
        let source = WebSnapshotSource(health: health, paths: paths, config: config, environment: ["NS_TOKEN": token])
        let server = StatusServer(health: health, extraRoutes: WebRoutes.routes(source: source, sessions: sessions,
                                                                               acks: AlertAcks(paths: paths)))
        let port = try await server.start(port: 0)
        defer { Task { await server.stop() } }

        // First load: the page, then what it links to (a browser fetches those in parallel).
        let runs = settings.quick ? 5 : 20
        var loads: [Double] = [], statuses: [Double] = []
        var bytes = 0, pageBytes = 0
        for _ in 0..<runs {
            let started = Date()
            let page = try LoopbackHTTP.get(port: port, "/web/", cookie: cookie)
            var total = page.count
            for asset in ["/web/assets/style.css", "/web/assets/app.js", "/web/assets/icon.svg"] {
                total += try LoopbackHTTP.get(port: port, asset, cookie: cookie).count
            }
            loads.append(Date().timeIntervalSince(started))
            bytes = total
            pageBytes = page.count
            let anchor = Date()
            _ = try LoopbackHTTP.get(port: port, "/status", cookie: nil)
            statuses.append(Date().timeIntervalSince(anchor))
        }
        let load = median(loads), status = median(statuses)
        report.figures.append(BenchFigure("first load: bytes (headers included)", Double(bytes) / 1024, unit: "KiB",
                                          detail: String(format: "page %.1f KiB with a day of readings (6 h chart)", Double(pageBytes) / 1024)))
        report.figures.append(BenchFigure("first load: page + 3 assets", load * 1000, unit: "ms", detail: "median of \(runs), sequential"))
        report.figures.append(BenchFigure("GET /status", status * 1000, unit: "ms", detail: "median of \(runs)"))
        report.ratios.append(BenchRatio("first load/GET /status", load / status, target: nil, goal: .atMost))

        // Live: a new reading in Nightscout until the event stream carries it.
        let stream = try LoopbackHTTP.EventStream(port: port, target: "/web/events", cookie: cookie)
        defer { stream.close() }
        _ = try stream.read(until: "event: page", timeout: 10)
        var latencies: [Double] = []
        for i in 0..<(settings.quick ? 3 : 8) {
            let value = 301 + i
            let started = Date()
            await simulator.seed("entries", [["type": "sgv", "sgv": .int(Int64(value)), "direction": "Flat",
                                              "date": .int(Int64(started.timeIntervalSince1970 * 1000))]])
            _ = try stream.read(until: "data-mgdl=\"\(value).0\"", timeout: 10)
            latencies.append(Date().timeIntervalSince(started))
        }
        report.figures.append(BenchFigure("new reading to page", median(latencies) * 1000, unit: "ms",
                                          detail: "median of \(latencies.count); servers are read at most every \(Int(WebSnapshotSource.remoteRefresh)) s, the stream looks every 1 s"))
        report.notes.append("in-process status server with the web routes (as `serve` runs them) against the Nightscout simulator; "
            + "raw HTTP/1.1 over loopback, one connection per request")
        return report
    }

    private func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}

/// Plain HTTP/1.1 over a loopback socket, for P11.
enum LoopbackHTTP {
    /// The whole answer (headers and body) of `GET target`.
    static func get(port: Int, _ target: String, cookie: String?) throws -> Data {
        let fd = try connect(port: port)
        defer { Glibc.close(fd) }
        try send(fd, "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
            + (cookie.map { "Cookie: \($0)\r\n" } ?? "") + "\r\n")
        var answer = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            answer.append(contentsOf: buffer[0..<n])
        }
        guard answer.starts(with: Data("HTTP/1.1 200".utf8)) else {
            throw BenchFailure("GET \(target): \(String(decoding: answer.prefix(120), as: UTF8.self))")
        }
        return answer
    }

    /// A server-sent event stream, read as text.
    final class EventStream: @unchecked Sendable {
        // @unchecked Sendable: used by one task at a time (the benchmark's).
        private let fd: Int32
        private var text = ""

        init(port: Int, target: String, cookie: String) throws {
            fd = try LoopbackHTTP.connect(port: port)
            try LoopbackHTTP.send(fd, "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: \(cookie)\r\n\r\n")
        }

        /// Reads until `marker` arrives after what was read before; the text read.
        func read(until marker: String, timeout: TimeInterval) throws -> String {
            let deadline = Date().addingTimeInterval(timeout)
            text = ""
            var buffer = [UInt8](repeating: 0, count: 65536)
            while !text.contains(marker) {
                guard Date() < deadline else { throw BenchFailure("the event stream did not carry \(marker) within \(timeout) s") }
                var wait = timeval(tv_sec: 1, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
                let n = recv(fd, &buffer, buffer.count, 0)
                if n == 0 { throw BenchFailure("the event stream ended") }
                if n > 0 { text += String(decoding: buffer[0..<n], as: UTF8.self) }
            }
            return text
        }

        func close() { Glibc.close(fd) }
    }

    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchFailure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { Glibc.close(fd); throw BenchFailure("connect to 127.0.0.1:\(port): errno \(errno)") }
        return fd
    }

    static func send(_ fd: Int32, _ request: String) throws {
        let bytes = Array(request.utf8)
        guard Glibc.send(fd, bytes, bytes.count, 0) == bytes.count else { throw BenchFailure("send: errno \(errno)") }
    }
}
