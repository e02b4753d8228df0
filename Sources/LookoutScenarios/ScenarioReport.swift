import Foundation
import LookoutModules
import Lua

/// What `lookout test` prints: the timeline of recorded side effects in virtual time, the
/// expectations' results and the verdict.
public struct ScenarioReport: Sendable, Codable {
    /// One line of the timeline.
    public struct Entry: Sendable, Codable {
        /// `+02:35`: time since the start of the run.
        public var offset: String
        /// ISO-8601 virtual time.
        public var time: String
        /// Side-effect kind (`notify`, `nightscout.upload`, `log`, …).
        public var kind: String
        /// Channel, site, boat or logger.
        public var target: String
        /// One line.
        public var summary: String
        /// Further fields (never secrets).
        public var details: [String: String]
    }

    /// The scenario's name.
    public var scenario: String
    /// The script.
    public var script: String
    /// ISO-8601 start of virtual time.
    public var start: String
    /// Hours run.
    public var hours: Double
    /// What would have reached outside, in order.
    public var timeline: [Entry]
    /// Expectation results.
    public var results: [ScenarioResult]
    /// Errors the script reported (uncaught errors in tasks, timers).
    public var scriptErrors: [String]
    /// Things the runner wants people to know (ignored sections, …).
    public var notices: [String]
    /// Real seconds the run took.
    public var realSeconds: Double
    /// Every expectation held and the script reported no error.
    public var passed: Bool
    /// Whether the script loaded (no syntax error, readable): if not, no expectation was checked.
    public var scriptLoaded: Bool

    /// Builds the report of a finished run.
    public init(scenario: Scenario, script: String, effects: [SideEffect], scriptErrors: [String], notices: [String],
                realSeconds: Double, scriptLoaded: Bool = true) {
        self.scenario = scenario.name
        self.script = script
        start = Self.iso(scenario.start)
        hours = scenario.hours
        timeline = effects.map {
            Entry(offset: Self.offset($0.time, from: scenario.start), time: Self.iso($0.time), kind: $0.kind, target: $0.target,
                  summary: $0.summary, details: $0.details)
        }
        self.scriptLoaded = scriptLoaded
        // A script that never ran cannot have met anything: no verdicts, not even "held".
        results = scriptLoaded ? scenario.expectations.map { $0.evaluate(effects, scenario: scenario) } : []
        self.scriptErrors = scriptErrors
        self.notices = notices
        self.realSeconds = realSeconds
        passed = scriptLoaded && results.allSatisfy(\.passed) && scriptErrors.isEmpty
    }

    /// ` [urgent-low, urgent]` for a notification whose summary does not already say so.
    static func alertTag(_ e: Entry) -> String {
        guard e.kind == "notify" else { return "" }
        let tags = [e.details["alert_id"], e.details["severity"]].compactMap { $0 }.filter { !e.summary.contains($0) }
        return tags.isEmpty ? "" : " [\(tags.joined(separator: ", "))]"
    }

    static func iso(_ d: Date) -> String { ISO8601DateFormatter().string(from: d) }

    /// `+02:35` (hours and minutes since `start`; `-00:10` before it).
    public static func offset(_ d: Date, from start: Date) -> String {
        let seconds = Int(d.timeIntervalSince(start).rounded(.down))
        let sign = seconds < 0 ? "-" : "+"
        let m = abs(seconds) / 60, s = abs(seconds) % 60
        return sign + String(format: "%02d:%02d", m / 60, m % 60) + (s == 0 ? "" : String(format: ":%02d", s))
    }

    /// The report for people.
    public var text: String {
        var lines = ["scenario \(scenario) · \(script) · start \(start) · \(Quantities.formatHours(hours)) in \(String(format: "%.2f", realSeconds)) s"]
        lines += notices.map { "notice: \($0)" }
        lines.append("")
        if timeline.isEmpty { lines.append("  (nothing would have reached outside)") }
        for e in timeline {
            let kind = e.kind.padding(toLength: 18, withPad: " ", startingAt: 0)
            let target = e.target.padding(toLength: 10, withPad: " ", startingAt: 0)
            lines.append("  \(e.offset.padding(toLength: 9, withPad: " ", startingAt: 0)) \(kind) \(target) \(e.summary)\(Self.alertTag(e))")
        }
        if !scriptErrors.isEmpty {
            lines.append("")
            lines += scriptErrors.map { "script error: \($0)" }
        }
        if !results.isEmpty {
            lines.append("")
            for r in results {
                let verdict = r.notReached ? "NOT REACHED" : r.passed ? "PASS" : "FAIL"
                lines.append("  \(verdict)  \(r.expectation): \(r.detail)")
            }
        }
        lines.append("")
        let failed = results.filter { !$0.passed }.count
        let unreached = results.filter(\.notReached).count, held = results.count - unreached
        if !scriptLoaded {
            lines.append("FAILED: the script did not load, so no expectation was checked")
            return lines.joined(separator: "\n")
        }
        lines.append(passed ? "ok: \(held) expectation\(held == 1 ? "" : "s") held"
                         + (unreached == 0 ? "" : ", \(unreached) not reached in this run")
                     : "FAILED: \(failed) of \(results.count) expectations" + (scriptErrors.isEmpty ? "" : ", \(scriptErrors.count) script error(s)"))
        return lines.joined(separator: "\n")
    }

    /// The report as JSON (sorted keys, pretty).
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

extension Quantities {
    /// `8h`, `1.5h`.
    static func formatHours(_ h: Double) -> String {
        h == h.rounded() ? "\(Int(h))h" : String(format: "%.2gh", h)
    }
}
