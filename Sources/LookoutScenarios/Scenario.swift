import Foundation
import Lua

/// A night (or any stretch of time) to run an automation through with `lookout test`: the data
/// the simulators serve, in virtual time, and what must (not) happen.
///
/// Scenario files are Lua files returning a table; see ``Scenario/parse(_:)`` and the README.
public struct Scenario: Sendable {
    /// Short name (`overnight-low`).
    public var name: String
    /// One line for people.
    public var description: String
    /// When virtual time starts.
    public var start: Date
    /// How long the run lasts.
    public var hours: Double
    /// Glucose readings, oldest first (times may be before `start`: history).
    public var readings: [Reading]
    /// Times Loop reported (devicestatus), oldest first; empty: no devicestatus at all.
    public var loopReports: [Date]
    /// Boat data, if any.
    public var boat: BoatTrace?
    /// Whether the file has a `garmin` section (no Garmin simulator yet: ignored with a notice).
    public var hasGarmin: Bool
    /// What must (not) happen.
    public var expectations: [ScenarioExpectation]
    /// Settings for the script under test (`settings = { low = 65 }`), written to the test
    /// config as `[scripts."SCRIPT".settings]` as TOML lines (`low = 65`).
    public var settings: [String] = []

    /// The end of the run.
    public var end: Date { start.addingTimeInterval(hours * 3600) }

    /// One CGM reading.
    public struct Reading: Sendable, Equatable {
        /// When.
        public var time: Date
        /// mg/dL.
        public var sgv: Int
    }

    /// Boat positions around an anchor.
    public struct BoatTrace: Sendable {
        /// Where the anchor was dropped.
        public var anchorLatitude: Double
        /// Where the anchor was dropped.
        public var anchorLongitude: Double
        /// The swing radius in metres (for `drift > N` conditions it is only informative).
        public var radius: Double
        /// Positions over time, oldest first.
        public var samples: [BoatSample]
    }

    /// One boat update.
    public struct BoatSample: Sendable {
        /// When.
        public var time: Date
        /// Degrees.
        public var latitude: Double
        /// Degrees.
        public var longitude: Double
        /// Wind speed in m/s, if given.
        public var windSpeed: Double?
        /// Depth below transducer in metres, if given.
        public var depth: Double?
    }

    /// A fixed default start: 22:00 UTC on 2026-01-10 (a Saturday night).
    public static let defaultStart = Date(timeIntervalSince1970: 1_768_082_400)
}

/// A scenario file is wrong; the message names the field.
public struct ScenarioError: Error, CustomStringConvertible, Sendable {
    /// What was wrong.
    public var description: String
    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

extension Scenario {
    /// Reads the table a scenario file returned.
    ///
    /// ```lua
    /// return {
    ///   name = "overnight-low", description = "…", start = "2026-01-10T22:00:00Z", hours = 8,
    ///   bg = { every = "5m", noise = 2, seed = 1, history = "1h",
    ///          points = { {"0m", 140}, {"3h", 52}, {"4h", 95} } },   -- or a list of values every 5 min
    ///   missed = { { from = "5h", to = "5h45m" } },
    ///   loop = { every = "5m", stop = "2h" },
    ///   boat = { anchor = { lat = 59.9, lon = 10.7 }, radius = 40, every = "1m",
    ///            points = { {"0m", 0}, {"2h", 15}, {"2h30m", 120} }, bearing = 45 },
    ///   expect = { { notify = "urgent-low", within = "15m", of = "bg < 55" }, { no_notify = "high" } },
    /// }
    /// ```
    public static func parse(_ value: LuaValue) throws -> Scenario {
        guard case .object(let t) = value else { throw ScenarioError("a scenario file must return a table") }
        let known: Set<String> = ["name", "description", "start", "hours", "bg", "missed", "loop", "boat", "garmin", "expect", "settings"]
        if let unknown = t.keys.sorted().first(where: { !known.contains($0) }) {
            throw ScenarioError("unknown field '\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
        }
        let name = t["name"]?.text ?? "scenario"
        let start = try t["start"].map { try date($0, "start") } ?? defaultStart
        let hours = try t["hours"].map { v -> Double in
            guard let h = v.double, h > 0, h <= 24 * 14 else { throw ScenarioError("hours: expected a number of hours in (0, 336]") }
            return h
        } ?? 8
        var scenario = Scenario(name: name, description: t["description"]?.text ?? "", start: start, hours: hours, readings: [],
                                loopReports: [], boat: nil, hasGarmin: t["garmin"] != nil, expectations: [])
        if let bg = t["bg"] { scenario.readings = try ScenarioTrace.readings(bg, start: start, end: scenario.end) }
        if let missed = t["missed"] { scenario.readings = try ScenarioTrace.dropping(missed, from: scenario.readings, start: start) }
        if let loop = t["loop"] { scenario.loopReports = try ScenarioTrace.loopReports(loop, start: start, end: scenario.end) }
        if let boat = t["boat"] { scenario.boat = try ScenarioTrace.boat(boat, start: start, end: scenario.end) }
        if let settings = t["settings"] {
            guard case .object(let o) = settings else { throw ScenarioError("settings: expected a table of the script's settings") }
            scenario.settings = try o.keys.sorted().map { key in
                guard key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { throw ScenarioError("settings.\(key): not a plain name") }
                switch o[key]! {
                case .bool(let b): return "\(key) = \(b)"
                case .int(let i): return "\(key) = \(i)"
                case .double(let d): return "\(key) = \(d)"
                case let v where v.text != nil:
                    let escaped = v.text!.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    return "\(key) = \"\(escaped)\""
                default: throw ScenarioError("settings.\(key): expected a number, string or boolean")
                }
            }
        }
        if let expect = t["expect"] {
            guard case .array(let list) = expect else { throw ScenarioError("expect: expected a list of expectations") }
            scenario.expectations = try list.enumerated().map { i, e in try ScenarioExpectation.parse(e, path: "expect[\(i + 1)]") }
        }
        return scenario
    }

    /// A date: ISO-8601 text or epoch milliseconds.
    static func date(_ v: LuaValue, _ path: String) throws -> Date {
        if let ms = v.double { return Date(timeIntervalSince1970: ms / 1000) }
        if let text = v.text {
            let f = ISO8601DateFormatter()
            if let d = f.date(from: text) { return d }
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let d = f.date(from: text) { return d }
        }
        throw ScenarioError("\(path): expected an ISO-8601 date such as \"2026-01-10T22:00:00Z\" or epoch milliseconds")
    }

    /// Seconds from a duration (`"5m"`, or a number of seconds).
    static func duration(_ v: LuaValue?, _ path: String) throws -> Double {
        if let d = v?.double, d.isFinite, d >= 0 { return d }
        if let text = v?.text, let d = Quantities.parseDuration(text) { return d }
        throw ScenarioError("\(path): expected a duration such as \"90s\", \"5m\", \"1h30m\"")
    }
}
