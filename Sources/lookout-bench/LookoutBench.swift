import Foundation

/// `lookout-bench`: Lookout's performance benchmarks (P1 binding calls, P2 JSON decoding,
/// P3 Nightscout history sync, P4 Signal K delta stream, P5 start-up, P6 serve memory, P7 sleeping tasks,
/// P8 pure-Lua compute, P9 parsers, P10 many sites on a cluster, P11 the web view), each
/// judged by a ratio to an anchor measured in the same run.
///
/// Run it from a release build: `swift run -c release lookout-bench [--quick] [--json FILE] [NAME…]`.
/// It reports and never fails on a missed target; the exit status is non-zero only when a
/// benchmark could not run.
@main
struct LookoutBench {
    /// Every benchmark, in the order they run.
    static let benchmarks: [any Benchmark] = [
        BindingCallBenchmark(), JSONDecodeBenchmark(), HistorySyncBenchmark(), DeltaStreamBenchmark(), StartupBenchmark(),
        SleepingTasksBenchmark(), ServeMemoryBenchmark(), ComputeBenchmark(), ParserThroughputBenchmark(),
        ClusterSitesBenchmark(), WebViewBenchmark(),
    ]

    static func main() async {
        let raw = Array(CommandLine.arguments.dropFirst())
        if raw.first == HistoryServerProcess.option, raw.count == 3, let days = Int(raw[1]), let limit = Int(raw[2]) {
            await HistoryServerProcess.serve(days: days, pageLimit: limit)
        }
        let arguments: BenchArguments
        do {
            arguments = try BenchArguments(Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("lookout-bench: \(error)\n\n\(BenchArguments.usage(benchmarks))\n".utf8))
            exit(2)
        }
        if arguments.help {
            print(BenchArguments.usage(benchmarks))
            return
        }
        let unknown = arguments.names.filter { name in !benchmarks.contains { $0.id == name } }
        guard unknown.isEmpty else {
            FileHandle.standardError.write(Data("lookout-bench: unknown benchmark \(unknown.joined(separator: ", "))\n\n\(BenchArguments.usage(benchmarks))\n".utf8))
            exit(2)
        }
        let selected = arguments.names.isEmpty ? benchmarks : benchmarks.filter { arguments.names.contains($0.id) }
        let settings = BenchSettings(quick: arguments.quick)
        #if DEBUG
        print("warning: this is a debug build; figures are meaningless (use swift run -c release lookout-bench)\n")
        #endif

        let started = Date()
        var reports: [BenchReport] = []
        var failures: [String: String] = [:]
        for benchmark in selected {
            FileHandle.standardError.write(Data("running \(benchmark.id): \(benchmark.summary)…\n".utf8))
            do {
                let report = try await benchmark.run(settings)
                reports.append(report)
                print(ReportPrinter.block(report) + "\n")
            } catch {
                failures[benchmark.id] = "\(error)"
                print("\(benchmark.id) FAILED: \(error)\n")
            }
        }
        print(ReportPrinter.summary(reports, failures: failures))

        if let path = arguments.jsonPath {
            let run = BenchRun(date: ISO8601DateFormatter().string(from: started), quick: settings.quick,
                               machine: machineDescription(), reports: reports, failures: failures)
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                try encoder.encode(run).write(to: URL(fileURLWithPath: path))
                print("\nwrote \(path)")
            } catch {
                FileHandle.standardError.write(Data("lookout-bench: cannot write \(path): \(error)\n".utf8))
                exit(2)
            }
        }
        if !failures.isEmpty { exit(1) }
    }

    /// `uname -srm` and the number of cores.
    static func machineDescription() -> String {
        var name = utsname()
        uname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return "\(field(name.sysname)) \(field(name.release)) \(field(name.machine)), "
            + "\(ProcessInfo.processInfo.activeProcessorCount) cores"
    }
}
