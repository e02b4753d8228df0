import Foundation
import LookoutSim
import LookoutAutomation
import LookoutModules

#if canImport(Glibc)
import Glibc
#endif

/// P6: resident memory of `lookout serve` running the ready scripts in Scripts/ (or, when there
/// are none, a small set of schedule scripts polling the Nightscout simulator) against an idle
/// `node -e 'setInterval(()=>{},1000)'` measured in the same run.
struct ServeMemoryBenchmark: Benchmark {
    let id = "P6"
    let summary = "resident memory: lookout serve (Scripts/ against the simulator) vs idle node"

    /// Most lookout/node ratio that passes.
    static let target = 1.0

    /// Scripts used when Scripts/ has none: each a schedule, two reading the simulator.
    static let ownScripts: [String: String] = [
        "bg-watch.lua": """
            local schedule = require "schedule"
            local nightscout = require "nightscout"
            local home = assert(nightscout.client "home")
            schedule.every("2s", function()
              local bg = home:latest()
              if bg and bg.sgv < 70 then log.warn("low", bg.sgv) end
            end, { name = "check" })
            """,
        "history.lua": """
            local schedule = require "schedule"
            local nightscout = require "nightscout"
            local store = require "store"
            local home = assert(nightscout.client "home")
            schedule.every("3s", function()
              local entries = home:entries { count = 48 }
              local sum = 0
              for _, e in ipairs(entries or {}) do sum = sum + (e.sgv or 0) end
              store.set("average", entries and #entries > 0 and sum / #entries or 0)
            end, { name = "average" })
            """,
        "daily.lua": """
            local schedule = require "schedule"
            schedule.at("07:00", function() print("good morning") end)
            schedule.cron("*/5 * * * *", function() collectgarbage("step") end)
            """,
    ]

    func run(_ settings: BenchSettings) async throws -> BenchReport {
        var report = BenchReport(id: id, title: "resident memory after start-up and \(settings.quick ? 3 : 10) s of serving (max of samples over \(settings.quick ? 2 : 60) s)")
        let buildFolder = (ProcessSpawner.ownExecutable() as NSString).deletingLastPathComponent
        let lookout = buildFolder + "/lookout"
        guard FileManager.default.isExecutableFile(atPath: lookout) else {
            throw BenchFailure("\(lookout) missing; build it: swift build -c release --product lookout")
        }
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-bench-p6-\(getpid())").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }

        let simulator = NightscoutSimulator()
        let base = try await simulator.start()
        let token = await simulator.addSubject(name: "bench", roles: ["admin"])
        await simulator.fill(days: 1, scenarios: [.overnightLow])
        let boat = try SignalKSimulator(options: .init(rate: 1))
        let boatURL = try await boat.start()
        try """
            [nightscout.home]
            url = "\(base.absoluteString)"
            token_env = "NS_TOKEN"
            [signalk.boat]
            url = "\(boatURL.absoluteString)"
            [notify.phone]
            type = "log"
            [notify.partner]
            type = "log"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)

        // The ready scripts that need only Nightscout and Signal K (the Garmin and Northlight ones
        // need an account login and a project key), copied so serve sees exactly these.
        let source = FileManager.default.currentDirectoryPath + "/Scripts"
        let ready = ((try? FileManager.default.contentsOfDirectory(atPath: source)) ?? []).filter {
            $0.hasSuffix(".lua") && !$0.hasPrefix("garmin") && !$0.hasPrefix("feedback")
        }
        var scriptsFolder = home + "/scripts"
        try FileManager.default.createDirectory(atPath: scriptsFolder, withIntermediateDirectories: true)
        for name in ready { try FileManager.default.copyItem(atPath: source + "/" + name, toPath: scriptsFolder + "/" + name) }
        if ready.isEmpty {
            scriptsFolder = home + "/scripts"
            try FileManager.default.createDirectory(atPath: scriptsFolder, withIntermediateDirectories: true)
            for (name, source) in Self.ownScripts {
                try source.write(toFile: scriptsFolder + "/" + name, atomically: true, encoding: .utf8)
            }
            report.notes.append("Scripts/ has no .lua files: served \(Self.ownScripts.count) own scripts (schedules polling the simulator)")
        } else {
            report.notes.append("served Scripts/ (\(ready.count) scripts; not the Garmin and Northlight ones, which need accounts): "
                                + ready.sorted().joined(separator: ", ") + ", against the Nightscout and Signal K simulators")
        }
        var environment = ProcessInfo.processInfo.environment
        environment["LOOKOUT_HOME"] = home
        environment["NS_TOKEN"] = token

        let serve = try BackgroundProcess(lookout, ["serve", scriptsFolder, "--status-port", "0"], environment: environment)
        defer { serve.stop() }
        var node: BackgroundProcess?
        if let nodePath = ProcessSpawner.which("node") {
            node = try BackgroundProcess(nodePath, ["-e", "setInterval(()=>{},1000)"], environment: environment)
        }
        defer { node?.stop() }

        // Let both settle, then sample every 250 ms for 2 s (quick) or every second for 60 s: the
        // highest sample counts, so what serve maps again after it released its start-up pages
        // (5 s after its scripts start), the ready scripts' one-minute checks included, is in it.
        let settle = settings.quick ? 3.0 : 10.0
        try await Task.sleep(for: .seconds(settle))
        var serveSamples: [Int] = []
        var nodeSamples: [Int] = []
        let (samples, interval) = settings.quick ? (8, 250) : (60, 1000)
        for _ in 0..<samples {
            guard serve.isRunning else { throw BenchFailure("lookout serve exited early (status \(serve.status))") }
            serveSamples.append(ProcessMemory.residentBytes(pid: serve.pid))
            if let node { nodeSamples.append(ProcessMemory.residentBytes(pid: node.pid)) }
            try await Task.sleep(for: .milliseconds(interval))
        }
        let serveRollup = ProcessMemory.rollup(pid: serve.pid)
        let nodeRollup = node.map { ProcessMemory.rollup(pid: $0.pid) }
        await simulator.stop()
        await boat.stop()
        // What the scripts did, from the status file serve writes every 2 s.
        if let data = FileManager.default.contents(atPath: home + "/state/serve-status.json"),
           let document = try? HealthDocument.decode(data) {
            let scripts = document.entries.filter { $0.kind == "script" }
            let running = scripts.filter { $0.state == .running }.count
            let runs = scripts.flatMap(\.jobs).map(\.runs).reduce(0, +)
            let errors = scripts.map(\.errors).reduce(0, +)
            report.notes.append("serve health: \(running)/\(scripts.count) scripts running, \(runs) job runs, \(errors) errors"
                + (scripts.compactMap(\.lastError).first.map { "; last error: \($0)" } ?? ""))
        } else {
            report.notes.append("serve wrote no status file (\(home)/state/serve-status.json)")
        }
        let mib = 1_048_576.0
        let serveMB = Double(serveSamples.max() ?? 0) / mib
        report.figures.append(BenchFigure("lookout serve: RSS", serveMB, unit: "MB",
                                          detail: String(format: "min %.1f MB over %d samples", Double(serveSamples.min() ?? 0) / mib, serveSamples.count)))
        report.figures.append(BenchFigure("lookout serve: PSS", Double(serveRollup.pss) / mib, unit: "MB", detail: "shared pages divided among their processes"))
        report.figures.append(BenchFigure("lookout serve: private dirty", Double(serveRollup.privateDirty) / mib, unit: "MB", detail: "heap and stacks"))
        if let node, let nodeRollup, !nodeSamples.isEmpty {
            let nodeMB = Double(nodeSamples.max() ?? 0) / mib
            report.figures.append(BenchFigure("node (idle setInterval): RSS", nodeMB, unit: "MB"))
            report.figures.append(BenchFigure("node: PSS", Double(nodeRollup.pss) / mib, unit: "MB"))
            report.figures.append(BenchFigure("node: private dirty", Double(nodeRollup.privateDirty) / mib, unit: "MB"))
            report.ratios.append(BenchRatio("lookout serve/node (RSS)", serveMB / nodeMB, target: Self.target, goal: .atMost))
            if nodeRollup.pss > 0 {
                report.ratios.append(BenchRatio("lookout serve/node (PSS)", Double(serveRollup.pss) / Double(nodeRollup.pss), target: nil, goal: .atMost))
            }
            report.notes.append("node is \(node.path); RSS is the largest of the samples, PSS and private dirty are from "
                + "/proc/PID/smaps_rollup after the last sample")
        } else {
            report.figures.append(BenchFigure(skipped: "node (idle setInterval)", reason: "SKIP: node not found on PATH"))
            report.ratios.append(BenchRatio(skipped: "lookout serve/node (RSS)", target: Self.target, goal: .atMost, reason: "SKIP: node not found"))
        }
        return report
    }
}

/// A program running in the background until `stop()`, output discarded.
final class BackgroundProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` is only read (isRunning, pid) after init and stopped once.
    private let process = Process()
    /// The program.
    let path: String

    init(_ path: String, _ arguments: [String], environment: [String: String]) throws {
        self.path = path
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }
    var status: Int32 { process.isRunning ? 0 : process.terminationStatus }

    /// SIGTERM, then waits for the exit.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
