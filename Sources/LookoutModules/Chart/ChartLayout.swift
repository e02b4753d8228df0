import Foundation
import LookoutWire

/// Options shared by the terminal and SVG renderings, and the scales they derive.
public struct ChartOptions: Sendable {
    /// Target range shaded on the chart (e.g. 70…180 mg/dL), if any: its lower edge …
    public var low: Double?
    /// … and its upper edge.
    public var high: Double?
    /// Fixed bottom of the value axis; by default the data and the target range, padded.
    public var minimum: Double?
    /// Fixed top of the value axis.
    public var maximum: Double?
    /// A title line.
    public var title: String?
    /// Unit label on the value axis (`mg/dL`, `mmol/L`, `kn`).
    public var unit: String?
    /// Time zone of the time labels.
    public var timeZone: TimeZone = .current

    /// Default options: no range, automatic axis.
    public init() {}
}

/// Maps times and values to a drawing area.
struct ChartScale: Sendable {
    let t0: Double, t1: Double
    let v0: Double, v1: Double

    init(series: ChartSeries, options: ChartOptions) {
        let values = series.points.map(\.value) + [options.low, options.high].compactMap { $0 }
        var lo = options.minimum ?? values.min() ?? 0
        var hi = options.maximum ?? values.max() ?? 1
        if hi - lo < 1e-9 { lo -= 1; hi += 1 }
        if options.minimum == nil || options.maximum == nil {
            let pad = (hi - lo) * 0.05
            if options.minimum == nil { lo -= pad }
            if options.maximum == nil { hi += pad }
        }
        v0 = lo
        v1 = hi
        t0 = series.points.first?.time ?? 0
        t1 = max(series.points.last?.time ?? 1, t0 + 1)
    }

    /// 0…1 across the time axis.
    func x(_ t: Double) -> Double { (t - t0) / (t1 - t0) }
    /// 0 (bottom) … 1 (top) on the value axis, clamped.
    func y(_ v: Double) -> Double { min(1, max(0, (v - v0) / (v1 - v0))) }

    /// A time label (`HH:mm`, with the day when the chart spans more than a day).
    /// (No `DateFormatter`: see ``WallClock``.)
    static func timeLabel(_ ms: Double, span: Double, timeZone: TimeZone) -> String {
        let clock = WallClock(Date(timeIntervalSince1970: ms / 1000), in: timeZone)
        return span > 86_400_000 ? clock.monthDayHourMinute : clock.hourMinute
    }

    /// A value label without needless decimals: whole numbers from 20 up (`180`), one decimal below (`3.9`).
    static func valueLabel(_ v: Double) -> String {
        abs(v) >= 20 || v.rounded() == v ? String(Int(v.rounded())) : String(format: "%.1f", v)
    }
}
