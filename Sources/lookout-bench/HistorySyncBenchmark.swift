import Foundation
import LookoutSim
import NightscoutKit
import LookoutModules

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// P3: a full API v3 HISTORY sync of a year of 5-minute CGM entries from the Nightscout simulator
/// over loopback, NightscoutKit (`client.history`) against one `curl` process fetching the same
/// page URLs with the same JWT.
struct HistorySyncBenchmark: Benchmark {
    let id = "P3"
    let summary = "v3 history sync of a year of CGM entries: NightscoutKit vs curl (same pages)"

    /// Most Kit/curl time ratio that passes.
    static let target = 1.1
    /// Documents per page: `API3_MAX_LIMIT`'s default, the most real Nightscout (and the Kit) allows.
    static let pageLimit = 1000
    /// Readings per day (one every 5 minutes).
    static let readingsPerDay = 288
    /// The reason printed when curl is missing.
    static let skipCurl = "SKIP: curl not found on PATH (apt-get install curl)"

    func run(_ settings: BenchSettings) async throws -> BenchReport {
        let days = settings.historyDays, runs = settings.historyRuns
        // The simulator runs in a process of its own: the Kit's timing holds the Kit's work only.
        let seedStart = BenchClock.monotonic()
        let server = try HistoryServerProcess.Child(days: days, pageLimit: Self.pageLimit)
        let seeded = BenchClock.monotonic()
        defer { server.stop() }
        return try await measure(base: server.base, token: server.token, days: days, runs: runs,
                                 setup: seeded - seedStart)
    }

    /// Syncs with the Kit and curl from the running server, and builds the report.
    private func measure(base: URL, token: String, days: Int, runs: Int, setup: Double) async throws -> BenchReport {
        let expected = days * Self.readingsPerDay
        let (_, sgvSum) = HistoryFixture.entries(count: expected)

        let configuration = try NightscoutConfiguration(siteURL: base, credentials: .accessToken(token))
        let client = NightscoutClient(configuration: configuration, authenticationFailureDelay: 0)
        let jwt = try await client.currentJWT()

        // Warm-up sync (not timed): checks the result and records the page URLs for curl.
        let warm = try await sync(client, expected: expected, sgvSum: sgvSum)
        let urls = try warm.cursors.map { cursor in
            try V3History.request(collection: .entries, after: cursor.requestValue, limit: Self.pageLimit,
                                  configuration: configuration, jwt: jwt).url.absoluteString
        }

        let curl = ProcessSpawner.which("curl")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-bench-p3-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configPath = directory + "/curl.conf"
        var curlBytes = 0
        if let curl {
            try CurlPages.writeConfig(to: configPath, urls: urls, jwt: jwt)
            curlBytes = try CurlPages.check(curl, config: configPath, pages: urls.count)
        }

        // Round robin, Kit then curl, so load from other work spreads over both.
        var kitTimes: [Double] = [], curlTimes: [Double] = [], peaks: [Int] = []
        for _ in 0..<runs {
            let measured = try await sync(client, expected: expected, sgvSum: sgvSum)
            guard measured.cursors == warm.cursors else {
                throw BenchFailure("the Kit requested different pages than in the warm-up sync")
            }
            kitTimes.append(measured.seconds)
            peaks.append(measured.peakGrowth)
            if let curl {
                let (seconds, status) = try ProcessSpawner.time(curl, ["-K", configPath], environment: CurlPages.environment)
                guard status == 0 else { throw BenchFailure("curl exited with status \(status)") }
                curlTimes.append(seconds)
            }
        }

        let requests = try warm.cursors.map { cursor in
            try V3History.request(collection: .entries, after: cursor.requestValue, limit: Self.pageLimit,
                                  configuration: configuration, jwt: jwt)
        }
        let decoding = try await decodeTimes(client, requests: requests, expected: expected, runs: runs)

        let mib = 1_048_576.0
        let kit = BenchClock.median(kitTimes)
        var report = BenchReport(
            id: id,
            title: "v3 history sync (\(expected.formatted()) entries = \(days) days × 288, \(urls.count) pages "
                + "of ≤\(Self.pageLimit), median of \(runs))")
        report.figures.append(BenchFigure(
            "NightscoutKit history sync", kit, unit: "s",
            detail: String(format: "%.0f entries/s, min %.3f s, max %.3f s", Double(expected) / kit,
                           kitTimes.min()!, kitTimes.max()!)))
        if curl != nil {
            let anchor = BenchClock.median(curlTimes)
            report.figures.append(BenchFigure(
                "curl, same \(urls.count) URLs", anchor, unit: "s",
                detail: String(format: "%.1f MB/s, min %.3f s, max %.3f s", Double(curlBytes) / mib / anchor,
                               curlTimes.min()!, curlTimes.max()!)))
            report.ratios.append(BenchRatio("Kit/curl", kit / anchor, target: Self.target, goal: .atMost))
        } else {
            report.figures.append(BenchFigure(skipped: "curl, same URLs", reason: Self.skipCurl))
            report.ratios.append(BenchRatio(skipped: "Kit/curl", target: Self.target, goal: .atMost, reason: Self.skipCurl))
        }
        report.figures.append(BenchFigure(
            "fetch alone (the Kit's transport, no decoding, no prefetch)", decoding.fetch, unit: "s",
            detail: String(format: "the same %d requests one after another, median of %d", requests.count, max(runs, 3))))
        report.figures.append(BenchFigure(
            "Kit page by page (historyPage: no prefetch)", decoding.stepped, unit: "s",
            detail: String(format: "fetch and decode, one page after another, median of %d", max(runs, 3))))
        for (name, seconds) in [("decoding alone, tree path (JSONValue tree, then keyed decode)", decoding.tree),
                                ("decoding alone, single pass (the Kit's path for entries)", decoding.single)] {
            report.figures.append(BenchFigure(
                name, seconds * 1000, unit: "ms",
                detail: String(format: "the %d page bodies of one sync, %.2f µs per entry, median of %d", requests.count,
                               seconds * 1e6 / Double(expected), max(runs, 3))))
        }
        let peak = Double(peaks.max()!) / mib
        report.figures.append(BenchFigure(
            "Kit sync peak RSS growth", peak, unit: "MB",
            detail: String(format: "max over %d syncs (median %.2f MB)", runs, Double(BenchClock.median(peaks.map(Double.init))) / mib)))
        if curl != nil {
            report.figures.append(BenchFigure("response bodies", Double(curlBytes) / mib, unit: "MB",
                                              detail: "as curl counted them (size_download)"))
        }
        report.figures.append(BenchFigure(
            "setup: start the server process, generate + seed", setup, unit: "s", detail: "not timed"))
        report.notes = [
            "simulator in a separate process (lookout-bench \(HistoryServerProcess.option)) on 127.0.0.1, so the Kit's "
                + "timing holds the Kit's work only; entries seeded "
                + "directly with identifier/srvCreated/srvModified, since fill() writes v1 documents HISTORY never returns",
            "Kit: client.history(Entry.self, .entries, limit: \(Self.pageLimit)) with an access token (JWT exchanged before "
                + "timing), documents counted and sgv summed; curl: one process, `curl -K` config with the same URLs "
                + "and Authorization header, -o /dev/null; wall clock, one warm-up round not counted",
            "peak RSS growth: VmHWM (reset through /proc/self/clear_refs, else VmRSS sampled per page) minus VmRSS "
                + "after malloc_trim(0) before the sync; MB = MiB",
        ]
        return report
    }

    /// Fetches the page bodies of one sync with the Kit's transport, one after another without
    /// decoding, and decodes them through the tree path and through the single pass; the median
    /// seconds of each over `runs` rounds (at least 3).
    private func decodeTimes(_ client: NightscoutClient, requests: [NightscoutRequest], expected: Int,
                             runs: Int) async throws -> (fetch: Double, stepped: Double, tree: Double, single: Double) {
        var bodies: [NightscoutHTTPResponse] = []
        var fetch: [Double] = [], tree: [Double] = [], single: [Double] = []
        for _ in 0..<max(runs, 3) {
            let start = BenchClock.monotonic()
            bodies = []
            for request in requests { bodies.append(try await client.transport.send(request, 60)) }
            fetch.append(BenchClock.monotonic() - start)
        }
        var stepped: [Double] = []
        for _ in 0..<max(runs, 3) {
            let start = BenchClock.monotonic()
            var cursor = HistoryCursor()
            while true {
                let page = try await client.historyPage(Entry.self, .entries, since: cursor, limit: Self.pageLimit)
                cursor = page.cursor
                if !page.hasMore { break }
            }
            stepped.append(BenchClock.monotonic() - start)
        }
        for _ in 0..<max(runs, 3) {
            for singlePass in [false, true] {
                let start = BenchClock.monotonic()
                var count = 0
                for body in bodies {
                    count += try NightscoutResponse.decodeV3Documents(Entry.self, from: body, singlePass: singlePass).count
                }
                let seconds = BenchClock.monotonic() - start
                // Pages overlap by one document at each cursor step, so at least `expected`.
                guard count >= expected else { throw BenchFailure("decoded \(count) entries, expected \(expected)") }
                if singlePass { single.append(seconds) } else { tree.append(seconds) }
            }
        }
        return (BenchClock.median(fetch), BenchClock.median(stepped), BenchClock.median(tree), BenchClock.median(single))
    }

    /// What one Kit sync measured.
    struct SyncResult {
        /// Wall-clock seconds from the first request to the end of the stream.
        var seconds: Double
        /// The cursor each request was made from, in order (one per page).
        var cursors: [HistoryCursor]
        /// Resident memory growth at the peak, in bytes.
        var peakGrowth: Int
    }

    /// Runs `client.history` to the end, checking the number of documents and the sum of `sgv`.
    private func sync(_ client: NightscoutClient, expected: Int, sgvSum: Int) async throws -> SyncResult {
        ProcessMemory.trim()
        let peakReset = PeakMemory.reset()
        let before = ProcessMemory.residentBytes()
        var sampled = before
        var cursors = [HistoryCursor()]
        var count = 0
        var sum = 0.0
        let start = BenchClock.monotonic()
        for try await page in client.history(Entry.self, .entries, limit: Self.pageLimit) {
            count += page.documents.count
            for entry in page.documents { sum += entry.sgv ?? 0 }
            if page.hasMore { cursors.append(page.cursor) }
            if !peakReset { sampled = max(sampled, ProcessMemory.residentBytes()) }
        }
        let seconds = BenchClock.monotonic() - start
        let peak = peakReset ? PeakMemory.highWaterBytes() : sampled
        guard count == expected else {
            throw BenchFailure("the Kit synced \(count) entries in \(cursors.count) pages, expected \(expected)")
        }
        guard Int(sum) == sgvSum else { throw BenchFailure("the Kit's sum of sgv is \(Int(sum)), expected \(sgvSum)") }
        return SyncResult(seconds: seconds, cursors: cursors, peakGrowth: max(0, peak - before))
    }
}

extension BenchSettings {
    /// Days of 5-minute CGM readings in P3 (a year; a month with `--quick`).
    var historyDays: Int { quick ? 30 : 365 }
    /// Timed syncs per side in P3 (the median is kept).
    var historyRuns: Int { quick ? 3 : 5 }
}

/// Fetches the Kit's page URLs with one `curl` process.
enum CurlPages {
    /// The environment curl runs with: no proxy variables, so it talks to 127.0.0.1 directly.
    static var environment: [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
    }

    /// Writes a `curl -K` config (mode 0600, so the JWT is neither in the process list nor
    /// readable by others): each URL with `-o /dev/null`, the Kit's v3 headers, `-sS --fail`.
    static func writeConfig(to path: String, urls: [String], jwt: String) throws {
        var lines = ["silent", "show-error", "fail", "noproxy = \"*\"",
                     "header = \"Accept: application/json\"", "header = \"Authorization: Bearer \(jwt)\""]
        for url in urls {
            lines.append("url = \"\(url)\"")
            lines.append("output = \"/dev/null\"")
        }
        guard FileManager.default.createFile(atPath: path, contents: Data((lines.joined(separator: "\n") + "\n").utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw BenchFailure("cannot write \(path)")
        }
    }

    /// Runs the config once (not timed) and checks every page answered 200.
    /// - Returns: the bytes of all response bodies.
    static func check(_ curl: String, config: String, pages: Int) throws -> Int {
        let (text, status) = try ProcessSpawner.output(
            curl, ["-K", config, "-w", "%{http_code} %{size_download}\\n"], environment: environment)
        let lines = text.split(separator: "\n")
        guard status == 0, lines.count == pages else {
            throw BenchFailure("curl exited with status \(status) after \(lines.count) of \(pages) pages")
        }
        var bytes = 0
        for line in lines {
            let parts = line.split(separator: " ")
            guard parts.count == 2, parts[0] == "200", let size = Int(parts[1]) else {
                throw BenchFailure("curl reported \(String(reflecting: String(line))) for a page")
            }
            bytes += size
        }
        return bytes
    }
}

/// The process's peak resident memory (`VmHWM`), which Linux resets on request.
enum PeakMemory {
    /// Resets the peak to the current resident size (`echo 5 > /proc/self/clear_refs`).
    /// - Returns: false where that is not possible (not Linux, or /proc not writable).
    static func reset() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }

    /// `VmHWM` in bytes, or 0 where /proc is not available.
    static func highWaterBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return (Int(String(line.dropFirst("VmHWM:".count).filter(\.isNumber))) ?? 0) * 1024
        }
        return 0
    }
}
