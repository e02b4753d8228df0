import Foundation
import LookoutConfig
import LookoutWire
import Lua

/// `chart`: a series (BG entries, any `{time, value}` list) as a terminal plot with the target
/// range marked, or as an SVG document; `chart.save` writes a report file into the state folder.
public struct ChartModule: LuaModule {
    public let name = "chart"
    public var stub: String { String(decoding: PackageResources.chart_lua, as: UTF8.self) }
    /// Where `chart.save` writes (`<state>/reports`).
    let reportsDirectory: String

    /// The unit the config's Nightscout profiles agree on (`units = "mmol"`): glucose entries
    /// are drawn in it when the options name none.
    let glucoseUnit: GlucoseText.Unit?

    /// A module whose `chart.save` writes into `<state>/reports` under `paths`; glucose entries
    /// are drawn in `glucoseUnit` (mg/dL when nil) unless the options say otherwise.
    public init(paths: LookoutPaths, glucoseUnit: GlucoseText.Unit? = nil) {
        reportsDirectory = paths.stateDirectory + "/reports"
        self.glucoseUnit = glucoseUnit
    }

    /// A module for `config`: glucose entries in the unit its Nightscout profiles agree on.
    public init(paths: LookoutPaths, config: HostConfig) {
        self.init(paths: paths, glucoseUnit: NightscoutGlucoseText.DefaultUnit(config: config).unit)
    }

    /// Above this a glucose threshold is taken as mg/dL when a chart is drawn in mmol/L.
    static let mgdlThreshold = 35.0

    static let plotKeys: Set<String> = ["width", "height", "low", "high", "min", "max", "title", "unit", "mmol", "color", "tz"]
    static let mgdlPerMmol = 18.0182

    public func push(into engine: LuaEngine, stack: LuaStack) throws {
        let directory = reportsDirectory
        let glucoseUnit = self.glucoseUnit
        engine.pushLibrary([
            "plot": { call in
                let (series, options, size) = try Self.arguments(call, defaultSize: (60, 12), sizeRange: (10...400, 2...200),
                                                                 glucoseUnit: glucoseUnit)
                var chart = TerminalChart(width: size.0, height: size.1)
                chart.color = try call.options(2)["color"].map { v throws(LuaRaise) in
                    guard case .bool(let b) = v else { throw call.argumentError(2, "opts.color: expected a boolean") }
                    return b
                } ?? false
                return call.returning(.text(chart.render(series, options: options)))
            },
            "svg": { call in
                let (series, options, size) = try Self.arguments(call, defaultSize: (800, 300), sizeRange: (100...10_000, 60...10_000),
                                                                 glucoseUnit: glucoseUnit)
                return call.returning(.text(SVGChart(width: size.0, height: size.1).render(series, options: options)))
            },
            "save": { call in
                let text = try call.string(1)
                let file = try call.string(2)
                guard Self.isPlainFileName(file) else {
                    throw call.argumentError(2, "expected a plain file name such as \"daily.svg\" (no folders), got \"\(file)\"")
                }
                return try call.wait("chart.save", {
                    let path = directory + "/" + file
                    do {
                        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                        try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
                    } catch {
                        throw LuaErrorInfo(code: "io", message: "cannot write \(path): \(error.localizedDescription)")
                    }
                    return path
                }) { stack, path in
                    stack.push(path)
                    return 1
                }
            },
        ], prefix: "chart.", on: stack)
    }

    /// A report name: letters, digits, `-`, `_`, `.`, not starting with a dot.
    static func isPlainFileName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 200 && !name.hasPrefix(".")
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
    }

    /// The series (argument 1), the options (argument 2) and the size in cells or pixels.
    /// Glucose entries (`sgv`, `mbg`) with neither `unit` nor `mmol` given are drawn in
    /// `glucoseUnit` (mg/dL when nil) and labelled with it; in mmol/L, thresholds above
    /// ``mgdlThreshold`` are read as mg/dL and converted.
    static func arguments(_ call: LuaCall, defaultSize: (Int, Int), sizeRange: (ClosedRange<Int>, ClosedRange<Int>),
                          glucoseUnit: GlucoseText.Unit? = nil) throws(LuaRaise)
        -> (ChartSeries, ChartOptions, (Int, Int))
    {
        let opts = try call.options(2)
        if let unknown = opts.keys.sorted().first(where: { !plotKeys.contains($0) }) {
            throw call.argumentError(2, "unknown option '\(unknown)' (known: \(plotKeys.sorted().joined(separator: ", ")))")
        }
        func number(_ key: String) throws(LuaRaise) -> Double? {
            guard let v = opts[key] else { return nil }
            guard v.double != nil else { throw call.argumentError(2, "opts.\(key): expected a number, got \(v.typeName)") }
            return try call.number(v, argument: 2, what: "opts.\(key)", in: .chartValue)
        }
        func size(_ key: String, _ range: ClosedRange<Int>, _ fallback: Int) throws(LuaRaise) -> Int {
            guard let v = opts[key] else { return fallback }
            guard let i = v.int, range.contains(Int(i)) else {
                throw call.argumentError(2, "opts.\(key): expected a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return Int(i)
        }
        func text(_ key: String) throws(LuaRaise) -> String? {
            guard let v = opts[key] else { return nil }
            guard let t = v.text else { throw call.argumentError(2, "opts.\(key): expected a string") }
            return t
        }
        var mmol = false
        if let v = opts["mmol"] {
            guard case .bool(let b) = v else { throw call.argumentError(2, "opts.mmol: expected a boolean") }
            mmol = b
        }
        var series: ChartSeries
        let raw = try call.value(1, name: "series")
        do { series = try ChartSeries.read(raw, scale: mmol ? 1 / mgdlPerMmol : 1) } catch {
            throw call.argumentError(1, error.description)
        }
        var options = ChartOptions()
        options.low = try number("low")
        options.high = try number("high")
        options.minimum = try number("min")
        options.maximum = try number("max")
        var glucoseLabel: String?
        if series.isGlucose, opts["mmol"] == nil, opts["unit"] == nil {
            let unit = glucoseUnit ?? .mgdl
            glucoseLabel = unit.rawValue
            if unit == .mmol {
                do { series = try ChartSeries.read(raw, scale: 1 / mgdlPerMmol) } catch { throw call.argumentError(1, error.description) }
                func converted(_ v: Double?) -> Double? { v.map { $0 > mgdlThreshold ? $0 / mgdlPerMmol : $0 } }
                options.low = converted(options.low)
                options.high = converted(options.high)
                options.minimum = converted(options.minimum)
                options.maximum = converted(options.maximum)
            }
        }
        if let lo = options.low, let hi = options.high, lo >= hi {
            throw call.argumentError(2, "opts.low must be below opts.high")
        }
        options.title = try text("title")
        options.unit = try text("unit") ?? (mmol ? "mmol/L" : glucoseLabel)
        if let tz = try text("tz") {
            guard let zone = TimeZone(identifier: tz) else { throw call.argumentError(2, "opts.tz: unknown time zone '\(tz)'") }
            options.timeZone = zone
        }
        let w = try size("width", sizeRange.0, defaultSize.0)
        let h = try size("height", sizeRange.1, defaultSize.1)
        return (series, options, (w, h))
    }
}
