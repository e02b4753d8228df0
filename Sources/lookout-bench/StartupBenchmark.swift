import Foundation

/// P5: process start-up, `lookout run -e 'print(1)'` against `lua5.4 -e 'print(1)'` and the real
/// python3 interpreter (not a version-manager shim) running `print(1)`.
struct StartupBenchmark: Benchmark {
    let id = "P5"
    let summary = "start-up: lookout run -e 'print(1)' vs lua5.4 and python3"

    /// Most lookout/python3 ratio that passes.
    static let target = 0.3

    /// A program to time.
    private struct Program {
        var label: String
        var path: String
        var arguments: [String]
        /// What it must print when run with a pipe (checked once before timing); nil: anything.
        var expected: String?
    }

    func run(_ settings: BenchSettings) async throws -> BenchReport {
        let runs = settings.startRuns
        var report = BenchReport(id: id, title: "start-up (median of \(runs) runs each, wall clock)")
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        var environment = ProcessInfo.processInfo.environment
        environment["LOOKOUT_HOME"] = home

        let buildFolder = (ProcessSpawner.ownExecutable() as NSString).deletingLastPathComponent
        let lookoutPath = buildFolder + "/lookout"
        var programs: [Program] = []
        var missing: [String: String] = [:]
        if FileManager.default.isExecutableFile(atPath: lookoutPath) {
            programs.append(Program(label: "lookout run -e", path: lookoutPath, arguments: ["run", "-e", "print(1)"], expected: "1"))
            programs.append(Program(label: "lookout --version", path: lookoutPath, arguments: ["--version"], expected: nil))
        } else {
            missing["lookout run -e"] = "SKIP: \(lookoutPath) missing; build it: swift build -c release --product lookout"
        }
        if let lua = ProcessSpawner.which("lua5.4") {
            programs.append(Program(label: "lua5.4 -e", path: lua, arguments: ["-e", "print(1)"], expected: "1"))
        } else {
            missing["lua5.4 -e"] = "SKIP: apt-get install lua5.4"
        }
        if let shim = ProcessSpawner.which("python3") {
            let (real, status) = try ProcessSpawner.output(shim, ["-c", "import sys; print(sys.executable)"])
            if status == 0, real.hasPrefix("/") {
                programs.append(Program(label: "python3 -c", path: real, arguments: ["-c", "print(1)"], expected: "1"))
                if real != shim { report.notes.append("python3 on PATH is \(shim); timed the real interpreter \(real)") }
            } else {
                missing["python3 -c"] = "SKIP: python3 could not report sys.executable"
            }
        } else {
            missing["python3 -c"] = "SKIP: python3 not found on PATH"
        }

        for program in programs {
            let (text, status) = try ProcessSpawner.output(program.path, program.arguments, environment: environment)
            guard status == 0, program.expected == nil || text == program.expected else {
                throw BenchFailure("\(program.path) \(program.arguments.joined(separator: " ")) printed \(String(reflecting: text)) with status \(status)")
            }
        }

        // Round robin, so load from other work on the machine spreads over all programs; the
        // first round warms the page cache and is not counted.
        var samples: [String: [Double]] = [:]
        for round in 0...runs {
            for program in programs {
                let (seconds, status) = try ProcessSpawner.time(program.path, program.arguments, environment: environment)
                guard status == 0 else { throw BenchFailure("\(program.label) exited with status \(status)") }
                if round > 0 { samples[program.label, default: []].append(seconds) }
            }
        }

        var medians: [String: Double] = [:]
        for label in ["lookout run -e", "lookout --version", "lua5.4 -e", "python3 -c"] {
            if let reason = missing[label] {
                report.figures.append(BenchFigure(skipped: label, reason: reason))
                continue
            }
            guard let values = samples[label] else { continue }
            let median = BenchClock.median(values)
            medians[label] = median
            report.figures.append(BenchFigure(
                label, median * 1000, unit: "ms",
                detail: String(format: "min %.1f ms, max %.1f ms", values.min()! * 1000, values.max()! * 1000)))
        }
        if let lookout = medians["lookout run -e"], let python = medians["python3 -c"] {
            report.ratios.append(BenchRatio("lookout/python3", lookout / python, target: Self.target, goal: .atMost))
        } else {
            report.ratios.append(BenchRatio(skipped: "lookout/python3", target: Self.target, goal: .atMost,
                                            reason: missing["lookout run -e"] ?? missing["python3 -c"] ?? "SKIP"))
        }
        if let lookout = medians["lookout run -e"], let lua = medians["lua5.4 -e"] {
            report.ratios.append(BenchRatio("lookout/lua5.4", lookout / lua, target: nil, goal: .atMost))
        }
        report.notes.append("lookout is \(lookoutPath), LOOKOUT_HOME=\(home) (empty); "
            + "'lookout --version' starts the binary without a Lua state, for comparison")
        return report
    }
}
