import Foundation
import Hummingbird
import LookoutAutomation
import LookoutModules
import LookoutSim
import LookoutWire

#if canImport(Glibc)
import Glibc
#endif

/// P10: many sites, each with a low-alert script (one binding per Nightscout profile), served by
/// three `serve --cluster` instances on one PostgreSQL against the same sites on one `serve` with
/// SQLite, on this machine. Figures: readings checked per second, alert latency (a low reading
/// stored → its notification received, p50/p99), database transactions per reading (PostgreSQL),
/// memory per site. The anchor is the one-instance SQLite run.
struct ClusterSitesBenchmark: Benchmark {
    let id = "P10"
    let summary = "1,000 sites with a low alert each: 3 cluster instances on PostgreSQL vs 1 serve on SQLite"

    /// The low alert, checking its site's newest reading every 5 s.
    static let script = """
        local alert = require "alert"
        local config = require "config"
        local nightscout = require "nightscout"
        local schedule = require "schedule"
        local s = config.settings { site = "home" }
        local home = assert(nightscout.client(s.site))
        local low = alert.define {
          id = "low", title = "Low", notify = { "hook" },
          series = function()
            local entries = home:entries { count = 1, type = "sgv" }
            if not entries or not entries[1] then return nil end
            return entries[1].sgv, entries[1].date
          end,
          when = alert.below(70), clear = alert.above(80),
        }
        schedule.every("5s", function() low:check() end, { name = "check" })
        """

    func run(_ settings: BenchSettings) async throws -> BenchReport {
        let sites = settings.quick ? 60 : 1_000
        let simulatorCount = settings.quick ? 2 : 10
        var report = BenchReport(id: id, title: "\(sites) sites, a low alert each (checks every 5 s), \(simulatorCount) simulators")
        let lookout = (ProcessSpawner.ownExecutable() as NSString).deletingLastPathComponent + "/lookout"
        guard FileManager.default.isExecutableFile(atPath: lookout) else {
            throw BenchFailure("\(lookout) missing; build it: swift build -c release --product lookout")
        }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-bench-p10-\(getpid())").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        Self.progress("starting PostgreSQL")
        let database = try BenchPostgres(folder: root + "/pg")
        defer { database.stop() }
        Self.progress("starting \(simulatorCount) Nightscout simulators and the webhook recorder")

        var simulators: [NightscoutSimulator] = []
        var urls: [URL] = []
        for _ in 0..<simulatorCount {
            let sim = NightscoutSimulator()
            urls.append(try await sim.start())
            simulators.append(sim)
        }
        let hook = BenchHook()
        let (hookPort, hookTask) = try await hook.start()
        defer { hookTask.cancel() }

        let scripts = root + "/scripts"
        try FileManager.default.createDirectory(atPath: scripts, withIntermediateDirectories: true)
        try Self.script.write(toFile: scripts + "/low.lua", atomically: true, encoding: .utf8)
        func config(state: String) -> String {
            var text = state + """

                [serve.bind]
                "low.lua" = ["nightscout.s*"]

                [notify.hook]
                type = "webhook"
                url = "http://127.0.0.1:\(hookPort)/hook"

                """
            for n in 1...sites { text += "[nightscout.s\(n)]\nurl = \"\(urls[n % simulatorCount].absoluteString)\"\n" }
            return text
        }

        Self.progress("cluster: 3 instances on PostgreSQL")
        let cluster = try await measure(
            "cluster", instances: 3, sites: sites, lookout: lookout, root: root + "/cluster",
            config: config(state: "[state]\nurl = \"\(database.url)\"\ntls = \"disable\"\n"), scripts: scripts,
            simulators: simulators, hook: hook, database: database, settings: settings)
        Self.progress("one serve on SQLite")
        let single = try await measure(
            "one serve, SQLite", instances: 1, sites: sites, lookout: lookout, root: root + "/single",
            config: config(state: ""), scripts: scripts, simulators: simulators, hook: hook, database: nil, settings: settings)
        for run in [cluster, single] {
            report.figures.append(BenchFigure("\(run.name): readings checked", run.checksPerSecond, unit: "/s"))
            report.figures.append(BenchFigure("\(run.name): alert latency p50", run.latencyP50, unit: "s",
                                              detail: "reading stored → notification received; checks every 5 s"))
            report.figures.append(BenchFigure("\(run.name): alert latency p99", run.latencyP99, unit: "s",
                                              detail: "\(run.notified)/\(sites) notified"))
            report.figures.append(BenchFigure("\(run.name): memory per site", run.bytesPerSite / 1024, unit: "KiB",
                                              detail: String(format: "%.0f MB RSS in %d process(es)", run.rss / 1_048_576, run.instances)))
            if let transactions = run.transactionsPerCheck {
                report.figures.append(BenchFigure("\(run.name): database transactions per reading", transactions, unit: ""))
            }
        }
        report.ratios.append(BenchRatio("cluster/one serve (readings checked per second)",
                                        cluster.checksPerSecond / max(single.checksPerSecond, 0.001), target: nil, goal: .atLeast))
        report.ratios.append(BenchRatio("cluster/one serve (alert latency p99)",
                                        cluster.latencyP99 / max(single.latencyP99, 0.001), target: nil, goal: .atMost))
        report.notes.append("both runs on this machine's cores: the cluster's gain is availability (work moves when an instance "
            + "dies), its cost is the database round trips; on several machines its capacity adds up")
        for sim in simulators { await sim.stop() }
        return report
    }

    /// What one configuration did.
    struct Run {
        var name: String
        var instances: Int
        var checksPerSecond: Double
        var latencyP50: Double
        var latencyP99: Double
        var notified: Int
        var rss: Double
        var bytesPerSite: Double
        var transactionsPerCheck: Double?
    }

    private func measure(
        _ name: String, instances: Int, sites: Int, lookout: String, root: String, config: String, scripts: String,
        simulators: [NightscoutSimulator], hook: BenchHook, database: BenchPostgres?, settings: BenchSettings
    ) async throws -> Run {
        // A normal reading on every site, then the instances.
        for sim in simulators {
            await sim.seed("entries", [["type": "sgv", "sgv": 120, "date": .number(Date().timeIntervalSince1970 * 1000)]])
        }
        hook.reset()
        var homes: [String] = []
        var processes: [BackgroundProcess] = []
        defer { for process in processes { process.stop() } }
        for i in 0..<instances {
            let home = root + "/home-\(i)"
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            try config.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
            var environment = ProcessInfo.processInfo.environment
            environment["LOOKOUT_HOME"] = home
            var arguments = ["serve", scripts, "--status-port", "0"]
            if instances > 1 { arguments += ["--cluster", "bench", "--instance", "i\(i)"] }
            processes.append(try BackgroundProcess(lookout, arguments, environment: environment))
            homes.append(home)
        }
        // Wait until every site's script runs and has checked once.
        let ready = Date(timeIntervalSinceNow: 300)
        var reported = Date()
        while Self.health(homes).running < sites {
            if Date().timeIntervalSince(reported) > 10 {
                Self.progress("\(name): \(Self.health(homes).running) of \(sites) sites running")
                reported = Date()
            }
            guard Date() < ready else { throw BenchFailure("\(name): only \(Self.health(homes).running) of \(sites) sites running after 300 s") }
            guard processes.allSatisfy(\.isRunning) else { throw BenchFailure("\(name): a serve process exited") }
            try await Task.sleep(for: .seconds(1))
        }
        Self.progress("\(name): all \(sites) sites running; measuring")
        // Steady state: checks per second and transactions per check.
        let window = settings.quick ? 10.0 : 30.0
        let runsBefore = Self.health(homes).runs, transactionsBefore = database?.transactions()
        let activityBefore = database?.tableActivity() ?? [:]
        let started = Date()
        try await Task.sleep(for: .seconds(window))
        // serve-status.json is rewritten every 2 s: wait for one written after the window.
        try await Task.sleep(for: .seconds(2.5))
        let elapsed = Date().timeIntervalSince(started) - 2.5
        let runs = Self.health(homes).runs - runsBefore
        let transactions = database?.transactions().flatMap { after in transactionsBefore.map { Double(after - $0) } }
        let rss = processes.map { Double(ProcessMemory.residentBytes(pid: $0.pid)) }.reduce(0, +)
        if let activity = database?.tableActivity() {
            let busiest = activity.map { ($0.key, Double($0.value - (activityBefore[$0.key] ?? 0)) / Double(max(runs, 1))) }
                .filter { $0.1 > 0.05 }.sorted { $0.1 > $1.1 }
            Self.progress("\(name): per reading, scans and rows written by table: "
                + busiest.map { "\($0.0) \(String(format: "%.1f", $0.1))" }.joined(separator: ", "))
        }

        // A low reading on every site at once: how long until each site's notification arrives.
        let stored = Date()
        for sim in simulators {
            await sim.seed("entries", [["type": "sgv", "sgv": 60, "date": .number(stored.timeIntervalSince1970 * 1000 + 1)]])
        }
        let deadline = Date(timeIntervalSinceNow: 60)
        while hook.count < sites, Date() < deadline { try await Task.sleep(for: .milliseconds(200)) }
        let latencies = hook.arrivals.map { $0.timeIntervalSince(stored) }.sorted()
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
        return Run(name: name, instances: instances, checksPerSecond: Double(runs) / elapsed, latencyP50: percentile(0.5),
                   latencyP99: percentile(0.99), notified: latencies.count, rss: rss, bytesPerSite: rss / Double(sites),
                   transactionsPerCheck: transactions.map { $0 / Double(max(runs, 1)) })
    }

    /// A line on standard error about where the benchmark is.
    static func progress(_ text: String) { FileHandle.standardError.write(Data("  P10: \(text)\n".utf8)) }

    /// Scripts running and job runs, summed over the instances' status files.
    static func health(_ homes: [String]) -> (running: Int, runs: Int) {
        var running = 0, runs = 0
        for home in homes {
            guard let data = FileManager.default.contents(atPath: home + "/state/serve-status.json"),
                  let document = try? HealthDocument.decode(data) else { continue }
            for entry in document.entries where entry.kind == "script" {
                if entry.state == .running { running += 1 }
                runs += entry.jobs.map(\.runs).reduce(0, +)
            }
        }
        return (running, runs)
    }
}

/// Receives the webhook notifications and when each arrived.
final class BenchHook: Sendable {
    private let received = Locked<[Date]>([])

    var arrivals: [Date] { received.withLock { $0 } }
    var count: Int { received.withLock { $0.count } }
    func reset() { received.withLock { $0 = [] } }

    func start() async throws -> (Int, Task<Void, any Error>) {
        let router = Router()
        router.post("hook") { [received] _, _ -> HTTPResponse.Status in
            received.withLock { $0.append(Date()) }
            return .ok
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in
                                  continuation.yield(channel.localAddress?.port ?? 0)
                                  continuation.finish()
                              })
        let task = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else { throw BenchFailure("the webhook recorder did not start") }
        return (port, task)
    }
}

/// A throwaway PostgreSQL for P10: Debian's binaries, `initdb` (trust on loopback) in a folder
/// as an unprivileged user when run as root, a free port; stopped and removed afterwards.
final class BenchPostgres: Sendable {
    let url: String
    private let folder: String
    private let port: Int
    private let bin = "/usr/lib/postgresql/15/bin"

    init(folder: String) throws {
        self.folder = folder
        port = Int.random(in: 40_000...60_000)
        url = "postgresql://postgres@127.0.0.1:\(port)/postgres"
        guard FileManager.default.isExecutableFile(atPath: bin + "/initdb") else {
            throw BenchFailure("PostgreSQL 15 is not installed (apt-get install postgresql)")
        }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let user = getuid() == 0 ? "lookout-test" : nil
        if let user { _ = try ProcessSpawner.output("/usr/bin/chown", [user, folder]) }
        // Output to /dev/null, not a pipe (the server pg_ctl starts would keep it open), and
        // waited for with waitpid (Foundation's Process missed runuser's exit here).
        func run(_ arguments: [String]) throws {
            let command = user.map { ["/usr/sbin/runuser", "-u", $0, "--"] + arguments } ?? arguments
            let (_, status) = try ProcessSpawner.time(command[0], Array(command.dropFirst()),
                                                      environment: ProcessInfo.processInfo.environment)
            guard status == 0 else { throw BenchFailure("\(arguments.joined(separator: " ")) failed (exit \(status))") }
        }
        try run([bin + "/initdb", "-D", folder + "/data", "-U", "postgres", "--auth=trust", "--no-sync"])
        try run([bin + "/pg_ctl", "-D", folder + "/data", "-l", folder + "/server.log", "-w", "start", "-o",
                 "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300"])
    }

    /// Per table, the scans and rows written so far (`pg_stat_user_tables`): where the
    /// transactions go.
    func tableActivity() -> [String: Int] {
        let (text, status) = (try? ProcessSpawner.output("/usr/bin/psql", [
            "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-AF", " ", "-tc",
            "SELECT relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0) + n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables",
        ])) ?? ("", 1)
        guard status == 0 else { return [:] }
        var activity: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let count = Int(parts[1]) { activity[String(parts[0])] = count }
        }
        return activity
    }

    /// Committed transactions of the database so far.
    func transactions() -> Int? {
        let (text, status) = (try? ProcessSpawner.output("/usr/bin/psql", [
            "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-Atc",
            "SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'",
        ])) ?? ("", 1)
        return status == 0 ? Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) : nil
    }

    func stop() {
        let user = getuid() == 0 ? "lookout-test" : nil
        let command = (user.map { ["/usr/sbin/runuser", "-u", $0, "--"] } ?? []) + [bin + "/pg_ctl", "-D", folder + "/data", "-m", "fast", "stop"]
        _ = try? ProcessSpawner.time(command[0], Array(command.dropFirst()), environment: ProcessInfo.processInfo.environment)
    }
}
