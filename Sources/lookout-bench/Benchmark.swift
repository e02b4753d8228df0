/// One benchmark of the suite (P1, P2, …): it measures, then describes what it found.
protocol Benchmark: Sendable {
    /// The short name used on the command line and in the summary (`P1`).
    var id: String { get }
    /// What the benchmark measures, for `--help`.
    var summary: String { get }
    /// Runs the measurements with the given sizes and returns the figures and ratios.
    func run(_ settings: BenchSettings) async throws -> BenchReport
}

/// Sizes and repetitions shared by all benchmarks; `--quick` cuts them for smoke tests.
struct BenchSettings: Sendable {
    /// Smoke-test sizes instead of the real ones.
    var quick: Bool

    /// Lua-loop calls per variant in P1.
    var callCount: Int { quick ? 1_000_000 : 10_000_000 }
    /// Size of the generated Nightscout JSON in P2, in bytes.
    var jsonBytes: Int { quick ? 1 << 20 : 10 << 20 }
    /// Repetitions of which the best is kept (P1, P2).
    var bestOf: Int { 5 }
    /// Process starts per program in P5 (the median is kept).
    var startRuns: Int { quick ? 5 : 20 }
    /// Concurrent sleeping tasks in P7.
    var sleepingTasks: Int { quick ? 1_000 : 10_000 }
    /// Runs per program in P8 (the median is kept).
    var computeRuns: Int { quick ? 3 : 7 }
}

/// A benchmark could not be run at all (as opposed to an anchor being skipped).
struct BenchFailure: Error, CustomStringConvertible {
    /// What went wrong, and how to fix it when known.
    let description: String
    init(_ description: String) { self.description = description }
}
