/// The command line of `lookout-bench`: `[--quick] [--json FILE] [NAME…]`.
struct BenchArguments {
    /// Benchmarks to run, by id (`P1`); empty means all.
    var names: [String] = []
    /// Smoke-test sizes.
    var quick = false
    /// Where to write the figures as JSON.
    var jsonPath: String?
    /// Print usage and exit.
    var help = false

    /// Parses the arguments after the program name.
    /// - Throws: `BenchFailure` for an unknown option or a missing value.
    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick": quick = true
            case "--json":
                guard let path = rest.popFirst() else { throw BenchFailure("--json needs a file name") }
                jsonPath = path
            case "-h", "--help": help = true
            default:
                if argument.hasPrefix("--json=") {
                    jsonPath = String(argument.dropFirst("--json=".count))
                } else if argument.hasPrefix("-") {
                    throw BenchFailure("unknown option \(argument)")
                } else {
                    names.append(argument.uppercased())
                }
            }
        }
    }

    /// The usage text, listing the benchmarks.
    static func usage(_ benchmarks: [any Benchmark]) -> String {
        var lines = [
            "usage: swift run -c release lookout-bench [--quick] [--json FILE] [NAME…]",
            "",
            "Runs Lookout's performance benchmarks (all when no NAME is given) and prints each",
            "figure with its ratio to an anchor measured in the same run, the target and PASS/MISS.",
            "",
            "  --quick      small sizes for a smoke test (1M calls, 1 MB JSON, 5 starts, 1,000 tasks)",
            "  --json FILE  also write every figure and ratio to FILE as JSON",
            "",
            "benchmarks:",
        ]
        for benchmark in benchmarks { lines.append("  \(benchmark.id)  \(benchmark.summary)") }
        return lines.joined(separator: "\n")
    }
}
