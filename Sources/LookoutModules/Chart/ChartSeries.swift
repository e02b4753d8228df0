import Foundation
import Lua

/// The points of a chart, in time order: what `chart.plot`/`chart.svg` take from a script.
public struct ChartSeries: Sendable, Equatable {
    /// One point: epoch milliseconds (or the index when the series has no times) and a value.
    public struct Point: Sendable, Equatable {
        /// Epoch milliseconds, or the point's index when the series has no times.
        public var time: Double
        /// The plotted value, already multiplied by the `scale` it was read with (mg/dL → mmol/L).
        public var value: Double

        /// A point at `time` (epoch ms, or an index).
        public init(time: Double, value: Double) {
            self.time = time
            self.value = value
        }
    }

    /// The points in time order.
    public var points: [Point]
    /// Whether `time` is epoch milliseconds (else a plain index).
    public var hasTimes: Bool
    /// Whether every value came from a Nightscout glucose field (`sgv`, `mbg`): mg/dL.
    public var isGlucose = false

    /// A series of points (sorted by time here).
    public init(points: [Point], hasTimes: Bool) {
        self.points = points.sorted { $0.time < $1.time }
        self.hasTimes = hasTimes
    }

    /// Reads a list of numbers, of `{t, v}` pairs, of tables with `date`/`time`/`t` and
    /// `sgv`/`value`/`v` (Nightscout entries as they come), or of `{time, value}` arrays.
    /// `scale` multiplies every value (mg/dL → mmol/L). Points without a value (a calibration
    /// entry, `json.null`) are skipped; anything else malformed is an error naming the element.
    static func read(_ value: LuaValue, scale: Double = 1) throws(ChartError) -> ChartSeries {
        guard case .array(let items) = value else {
            if case .object(let o) = value, o.isEmpty { return ChartSeries(points: [], hasTimes: false) }
            throw ChartError("series: expected a list of numbers or of points, got \(value.typeName)")
        }
        var points: [Point] = []
        var timed: Bool?
        var glucose = !items.isEmpty
        for (i, item) in items.enumerated() {
            let at = "series[\(i + 1)]"
            var time: Double?
            var v: Double?
            switch item {
            case .int, .double:
                v = item.double
                glucose = false
            case .array(let pair) where pair.count == 2:
                glucose = false
                time = pair[0].double
                v = pair[1].double
                guard time != nil, v != nil else { throw ChartError("\(at): expected {time, value} numbers") }
            case .object(let o):
                time = (o["date"] ?? o["time"] ?? o["t"] ?? o["mills"])?.double
                let raw = o["sgv"] ?? o["mbg"] ?? o["value"] ?? o["v"]
                if raw == nil || raw == .null { continue }
                if o["sgv"] == nil && o["mbg"] == nil { glucose = false }
                v = raw?.double
                guard v != nil else { throw ChartError("\(at): the value is not a number") }
            default:
                throw ChartError("\(at): expected a number or a point table, got \(item.typeName)")
            }
            guard let value = v, value.isFinite else { throw ChartError("\(at): the value is not a finite number") }
            guard LuaRange.chartValue.check(value) != nil else {
                throw ChartError(LuaRange.chartValue.problem("\(at): the value", got: LuaRange.numberText(value)))
            }
            if let time, LuaRange.epochMilliseconds.check(time) == nil {
                throw ChartError(LuaRange.epochMilliseconds.problem("\(at): the time", got: LuaRange.numberText(time)))
            }
            let hasTime = time != nil
            if let timed, timed != hasTime { throw ChartError("\(at): mixes points with and without times") }
            timed = hasTime
            points.append(Point(time: time ?? Double(points.count), value: value * scale))
        }
        points.sort { $0.time < $1.time }
        var series = ChartSeries(points: points, hasTimes: timed ?? false)
        series.isGlucose = glucose && !points.isEmpty
        return series
    }

    /// The time step above which the line is broken, so a sensor gap shows as a gap: three times
    /// the median step (at least one step).
    var gapThreshold: Double {
        guard points.count > 2 else { return .infinity }
        var steps = zip(points.dropFirst(), points).map { $0.time - $1.time }.filter { $0 > 0 }
        guard !steps.isEmpty else { return .infinity }
        steps.sort()
        return steps[steps.count / 2] * 3
    }
}

/// A chart argument that cannot be drawn.
struct ChartError: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
