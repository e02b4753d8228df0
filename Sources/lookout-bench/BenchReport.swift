/// One measured figure of a benchmark, e.g. "C lua_CFunction: 0.30 s, 33.2 M calls/s".
struct BenchFigure: Codable, Sendable {
    /// What was measured.
    var label: String
    /// The measured value, in `unit`; nil when the measurement was skipped.
    var value: Double?
    /// The unit of `value` (`s`, `ms`, `MB`).
    var unit: String
    /// A derived figure or remark printed after the value ("47.6 M calls/s").
    var detail: String?

    /// A figure with a value.
    init(_ label: String, _ value: Double, unit: String, detail: String? = nil) {
        self.label = label
        self.value = value
        self.unit = unit
        self.detail = detail
    }

    /// A figure that could not be measured, with the reason ("SKIP: apt-get install lua-cjson").
    init(skipped label: String, reason: String) {
        self.label = label
        self.value = nil
        self.unit = ""
        self.detail = reason
    }
}

/// A ratio against an anchor measured in the same run, with its target.
struct BenchRatio: Codable, Sendable {
    /// Which direction of the ratio passes.
    enum Goal: String, Codable, Sendable {
        /// The ratio must not exceed the target (costs: time, memory).
        case atMost
        /// The ratio must reach the target (speed-ups).
        case atLeast
    }

    /// What is divided by what ("Swift/C").
    var label: String
    /// The ratio; nil when its anchor was skipped.
    var value: Double?
    /// The target the ratio is judged against; nil for ratios printed for information only.
    var target: Double?
    /// Whether the ratio must stay below or reach the target.
    var goal: Goal
    /// Why the ratio is missing, when it is.
    var skipReason: String?
    /// "PASS", "MISS", "info" (no target) or "SKIP" (no value), as printed.
    var result: String

    /// Whether the target is met; nil when there is no target or no value.
    var passed: Bool? {
        guard let value, let target else { return nil }
        switch goal {
        case .atMost: return value <= target
        case .atLeast: return value >= target
        }
    }

    /// A judged ratio.
    init(_ label: String, _ value: Double, target: Double?, goal: Goal) {
        self.label = label
        self.value = value
        self.target = target
        self.goal = goal
        self.result = "info"
        self.result = passed.map { $0 ? "PASS" : "MISS" } ?? "info"
    }

    /// A ratio whose anchor could not be measured.
    init(skipped label: String, target: Double?, goal: Goal, reason: String) {
        self.label = label
        self.target = target
        self.goal = goal
        self.skipReason = reason
        self.result = "SKIP"
    }
}

/// Everything one benchmark found.
struct BenchReport: Codable, Sendable {
    /// The benchmark's short name (`P1`).
    var id: String
    /// Its title with the sizes used ("binding call (10M calls, best of 5)").
    var title: String
    /// The measured figures.
    var figures: [BenchFigure] = []
    /// The ratios against the anchors.
    var ratios: [BenchRatio] = []
    /// How it was measured (which C function, which clock, which interpreter path).
    var notes: [String] = []

    /// An empty report for a benchmark.
    init(id: String, title: String) {
        self.id = id
        self.title = title
    }
}

/// The whole run, as written by `--json FILE`.
struct BenchRun: Codable, Sendable {
    /// When the run started (ISO 8601, UTC).
    var date: String
    /// Whether `--quick` sizes were used.
    var quick: Bool
    /// The machine, as `uname` reports it, and its core count.
    var machine: String
    /// One report per benchmark run.
    var reports: [BenchReport]
    /// Benchmarks that failed to run, with the reason.
    var failures: [String: String]
}
