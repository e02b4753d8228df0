import Foundation

/// P8: pure-Lua compute (recursion, a sort of 200,000 numbers, string building) under
/// `lookout run` with its default limits, against the stock `lua5.4` running the same file. The
/// limits must not tax ordinary code: the count hook is armed only when a limit is reached.
struct ComputeBenchmark: Benchmark {
    let id = "P8"
    let summary = "pure-Lua compute: lookout run vs stock lua5.4 (same file)"

    /// Most lookout/lua5.4 ratio (time inside the process) that passes.
    static let target = 1.05

    func run(_ settings: BenchSettings) async throws -> BenchReport {
        let runs = settings.computeRuns
        var report = BenchReport(id: id, title: "pure-Lua compute (median of \(runs) runs each)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-bench-p8-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let script = folder + "/compute.lua"
        try Data(PackageResources.compute_lua).write(to: URL(fileURLWithPath: script))
        var environment = ProcessInfo.processInfo.environment
        environment["LOOKOUT_HOME"] = folder

        let lookout = (ProcessSpawner.ownExecutable() as NSString).deletingLastPathComponent + "/lookout"
        guard FileManager.default.isExecutableFile(atPath: lookout) else {
            report.ratios.append(BenchRatio(skipped: "lookout/lua5.4", target: Self.target, goal: .atMost,
                                            reason: "SKIP: \(lookout) missing; build it: swift build -c release --product lookout"))
            return report
        }
        guard let lua = ProcessSpawner.which("lua5.4") else {
            report.ratios.append(BenchRatio(skipped: "lookout/lua5.4", target: Self.target, goal: .atMost,
                                            reason: "SKIP: apt-get install lua5.4"))
            return report
        }
        let programs = [("lookout run", lookout, ["run", script]), ("lua5.4", lua, [script])]

        // Round robin, so load from other work on the machine spreads over both; the first round
        // warms the page cache and is not counted.
        var inside: [String: [Double]] = [:]
        var whole: [String: [Double]] = [:]
        var checksums: Set<String> = []
        for round in 0...runs {
            for (label, path, arguments) in programs {
                let started = BenchClock.monotonic()
                let (text, status) = try ProcessSpawner.output(path, arguments, environment: environment)
                let seconds = BenchClock.monotonic() - started
                let fields = text.split(separator: " ")
                guard status == 0, fields.count == 3, fields[0] == "p8", let work = Double(fields[2]) else {
                    throw BenchFailure("\(label) \(script) printed \(String(reflecting: text)) with status \(status)")
                }
                checksums.insert(String(fields[1]))
                if round > 0 {
                    inside[label, default: []].append(work)
                    whole[label, default: []].append(seconds)
                }
            }
        }
        guard checksums.count == 1 else { throw BenchFailure("lookout and lua5.4 computed different results: \(checksums)") }

        for (label, _, _) in programs {
            let work = inside[label]!, total = whole[label]!
            report.figures.append(BenchFigure("\(label): work (os.clock)", BenchClock.median(work) * 1000, unit: "ms",
                                              detail: String(format: "min %.0f ms, max %.0f ms", work.min()! * 1000, work.max()! * 1000)))
            report.figures.append(BenchFigure("\(label): whole process", BenchClock.median(total) * 1000, unit: "ms",
                                              detail: String(format: "min %.0f ms, max %.0f ms", total.min()! * 1000, total.max()! * 1000)))
        }
        let ratio = BenchClock.median(inside["lookout run"]!) / BenchClock.median(inside["lua5.4"]!)
        report.ratios.append(BenchRatio("lookout/lua5.4 (work)", ratio, target: Self.target, goal: .atMost))
        let wholeRatio = BenchClock.median(whole["lookout run"]!) / BenchClock.median(whole["lua5.4"]!)
        report.ratios.append(BenchRatio("lookout/lua5.4 (whole process)", wholeRatio, target: nil, goal: .atMost))
        report.notes.append("the same file (Sources/lookout-bench/Resources/compute.lua) under `lookout run` with its "
            + "default limits (CPU 5 s, memory 64 MiB) and under \(lua); work time is os.clock() around the work, printed by the script")
        return report
    }
}
