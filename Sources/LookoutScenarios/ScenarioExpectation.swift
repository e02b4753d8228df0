import Foundation
import LookoutModules
import Lua

/// One assertion of a scenario, checked against the recorded side effects of the run:
///
/// - `{ notify = "urgent-low", within = "15m", of = "bg < 55" }`: a notification for alert
///   `urgent-low` (a `notify` side effect whose `alert_id` or channel is it, or whose title or text contains it) at most 15
///   minutes after the first reading below 55; `severity = "urgent"` narrows it.
/// - `{ no_notify = "high" }`: no such notification (in the window, if `of`/`within` are given).
/// - `log`/`no_log` (a warn+ log line containing the text), `upload`/`no_upload` (a Nightscout
///   write: collection or text), `remote`/`no_remote` (a Loop remote command), `signalk`/
///   `no_signalk` (a Signal K PUT or published delta), and `effect = KIND` with `match = "…"`.
/// - `of`: `"bg < 55"` (also `<=`, `>`, `>=`), `"drift > 50"` (metres from the anchor), or a
///   time from the start (`"2h"`). Without `of` the window starts at the start of the run.
public struct ScenarioExpectation: Sendable {
    /// Must happen, or must not.
    public var mustHappen: Bool
    /// The side-effect family: `notify`, `log`, `upload`, `remote`, `signalk`, or a kind.
    public var family: String
    /// Text to match ("" = anything of the family).
    public var match: String
    /// `severity` of a notification, if required.
    public var severity: String?
    /// Seconds after the event (nil = until the end).
    public var within: Double?
    /// The event the window starts at (nil = the start of the run).
    public var event: Condition?
    /// How the scenario file said it, for reports.
    public var text: String

    /// When a window starts.
    public enum Condition: Sendable, Equatable {
        /// A time after the start.
        case offset(Double)
        /// The first reading (at or after the start) for which `sgv op value` holds.
        case bg(String, Double)
        /// The first boat position farther than `value` metres from the anchor.
        case drift(String, Double)
    }

    static let families = ["notify", "log", "upload", "remote", "signalk", "effect"]

    /// Reads one entry of `expect`.
    static func parse(_ v: LuaValue, path: String) throws -> ScenarioExpectation {
        guard case .object(let o) = v else { throw ScenarioError("\(path): expected a table such as { notify = \"urgent-low\" }") }
        let keys = families.flatMap { [$0, "no_" + $0] }
        let present = keys.filter { o[$0] != nil }
        guard present.count == 1, let key = present.first else {
            throw ScenarioError("\(path): give exactly one of \(keys.joined(separator: ", "))")
        }
        let known = Set([key, "within", "of", "severity", "match"])
        if let unknown = o.keys.sorted().first(where: { !known.contains($0) }) {
            throw ScenarioError("\(path): unknown field '\(unknown)' (known: within, of, severity, match)")
        }
        let must = !key.hasPrefix("no_")
        var family = must ? key : String(key.dropFirst(3))
        var match = o[key]?.text ?? ""
        if o[key] == .bool(true) { match = "" }
        if family == "effect" {
            guard !match.isEmpty else { throw ScenarioError("\(path).\(key): expected a side-effect kind such as \"nightscout.upload\"") }
            family = match
            match = o["match"]?.text ?? ""
        }
        let within = try o["within"].map { try Scenario.duration($0, "\(path).within") }
        let event = try o["of"].map { try condition($0, "\(path).of") }
        var text = "\(key) \(o[key]?.text.map { "\"\($0)\"" } ?? "")"
        if let s = o["severity"]?.text { text += " severity \(s)" }
        if let within { text += " within \(Quantities.formatDuration(within))" }
        if let of = o["of"] { text += " of \(of.text ?? Quantities.formatDuration(of.double ?? 0))" }
        return ScenarioExpectation(mustHappen: must, family: family, match: match, severity: o["severity"]?.text,
                                   within: within, event: event, text: text)
    }

    static func condition(_ v: LuaValue, _ path: String) throws -> Condition {
        if let d = v.double { return .offset(d) }
        guard let text = v.text else { throw ScenarioError("\(path): expected \"bg < 55\", \"drift > 50\" or a time such as \"2h\"") }
        if let d = Quantities.parseDuration(text) { return .offset(d) }
        let parts = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard parts.count == 3, ["<", "<=", ">", ">="].contains(parts[1]), let value = Double(parts[2]) else {
            throw ScenarioError("\(path): cannot read \"\(text)\"; expected \"bg < 55\", \"drift > 50\" or a time such as \"2h\"")
        }
        switch parts[0] {
        case "bg": return .bg(parts[1], value)
        case "drift": return .drift(parts[1], value)
        default: throw ScenarioError("\(path): unknown quantity \"\(parts[0])\" (known: bg, drift)")
        }
    }

    static func holds(_ a: Double, _ op: String, _ b: Double) -> Bool {
        switch op {
        case "<": return a < b
        case "<=": return a <= b
        case ">": return a > b
        default: return a >= b
        }
    }

    /// When the event happens in `scenario`, or nil if it never does.
    public func eventTime(in scenario: Scenario) -> Date? {
        switch event {
        case nil: return scenario.start
        case .offset(let d): return scenario.start.addingTimeInterval(d)
        case .bg(let op, let value):
            return scenario.readings.first { $0.time >= scenario.start && Self.holds(Double($0.sgv), op, value) }?.time
        case .drift(let op, let value):
            guard let boat = scenario.boat else { return nil }
            return boat.samples.first {
                Self.holds(ScenarioTrace.distance(boat.anchorLatitude, boat.anchorLongitude, $0.latitude, $0.longitude), op, value)
            }?.time
        }
    }

    /// Whether a recorded side effect is one this expectation is about.
    public func matches(_ e: SideEffect) -> Bool {
        func text(_ s: String) -> Bool { match.isEmpty || s.localizedCaseInsensitiveContains(match) }
        switch family {
        case "notify":
            guard e.kind == "notify" else { return false }
            if let severity, e.details["severity"] != severity { return false }
            return match.isEmpty || e.details["alert_id"] == match || e.target == match || text(e.details["title"] ?? "")
                || text(e.summary)
        case "log": return e.kind == "log" && text(e.summary)
        case "upload":
            return e.kind.hasPrefix("nightscout.") && e.kind != "nightscout.remote"
                && (e.details["collection"] == match || text(e.summary))
        case "remote": return e.kind == "nightscout.remote" && text(e.summary)
        case "signalk": return e.kind.hasPrefix("signalk.") && text(e.summary)
        default: return e.kind == family && text(e.summary)
        }
    }

    /// Checks the expectation against what the run recorded.
    public func evaluate(_ effects: [SideEffect], scenario: Scenario) -> ScenarioResult {
        guard let from = eventTime(in: scenario) else {
            return ScenarioResult(expectation: text, passed: false, detail: "the condition never happens in this scenario")
        }
        let until = within.map { from.addingTimeInterval($0) } ?? scenario.end
        let hits = effects.filter { $0.time >= from && $0.time <= until && matches($0) }
        let at = { (d: Date) in ScenarioReport.offset(d, from: scenario.start) }
        let window = event == nil ? "" : " (event at \(at(from)))"
        if from > scenario.end {
            // The run (shortened by --hours) ends before the event: nothing to judge.
            return ScenarioResult(expectation: text, passed: true, notReached: true,
                                  detail: "not reached: the event is at \(at(from)), after the run's end at \(at(scenario.end))")
        }
        if mustHappen {
            guard let first = hits.first else {
                if until > scenario.end {
                    return ScenarioResult(expectation: text, passed: true, notReached: true,
                                          detail: "not reached: nothing yet when the run ended at \(at(scenario.end)), "
                                              + "before the window's end at \(at(until))\(window)")
                }
                let later = effects.first { $0.time > until && matches($0) }
                return ScenarioResult(expectation: text, passed: false,
                                      detail: "nothing matching between \(at(from)) and \(at(until))\(window)"
                                          + (later.map { "; first match only at \(at($0.time))" } ?? ""))
            }
            let delay = Quantities.formatDuration(first.time.timeIntervalSince(from))
            return ScenarioResult(expectation: text, passed: true, detail: "at \(at(first.time)), \(delay) after\(window.isEmpty ? " the start" : window)")
        }
        guard let first = hits.first else { return ScenarioResult(expectation: text, passed: true, detail: "none\(window)") }
        return ScenarioResult(expectation: text, passed: false, detail: "\(hits.count) matching, first at \(at(first.time)): \(first.summary)")
    }
}

/// The outcome of one expectation.
public struct ScenarioResult: Sendable, Codable {
    /// The expectation as written.
    public var expectation: String
    /// Whether it held.
    public var passed: Bool
    /// When it matched, or why not.
    public var detail: String
    /// The run ended before the expectation could be judged (`--hours` shorter than the event or
    /// its window); it counts as neither held nor failed.
    public var notReached: Bool

    /// A result.
    public init(expectation: String, passed: Bool, notReached: Bool = false, detail: String) {
        self.expectation = expectation
        self.passed = passed
        self.notReached = notReached
        self.detail = detail
    }
}
