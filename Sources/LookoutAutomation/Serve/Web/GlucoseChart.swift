import Foundation

/// A profile's glucose chart as inline SVG, drawn on the server (it shows without JavaScript):
/// the target range as a band, the urgent-low line, one circle per reading (`data-mgdl` and
/// `data-time` carry its value and epoch milliseconds; its `<title>` gives both units on hover),
/// boluses and carbs as marked lines (`g.mark.bolus`, `g.mark.carbs`).
enum GlucoseChart {
    static let width = 720.0, height = 240.0
    static let lowest = 40.0, highest = 400.0

    /// The SVG of `glucose` over the `hours` before `now`.
    static func svg(_ glucose: WebSnapshot.Glucose, now: Date, hours: Int) -> String {
        let start = now.addingTimeInterval(-Double(hours) * 3600)
        let span = max(1, now.timeIntervalSince(start))
        func x(_ time: Date) -> String { format(min(width, max(0, time.timeIntervalSince(start) / span * width))) }
        func y(_ mgdl: Double) -> Double { height - (min(highest, max(lowest, mgdl)) - lowest) / (highest - lowest) * height }
        let unit = glucose.mmol ? "mmol/L" : "mg/dL"
        var svg = """
            <svg class="chart" viewBox="0 0 \(Int(width)) \(Int(height))" role="img" preserveAspectRatio="none" \
            aria-label="Glucose of \(WebHTML.escape(glucose.profile)), last \(hours) h, \(glucose.readings.count) readings, \(unit)">
            <rect class="target" x="0" y="\(format(y(glucose.targetHigh)))" width="\(Int(width))" \
            height="\(format(y(glucose.targetLow) - y(glucose.targetHigh)))"><title>target \(WebGlucoseText.value(glucose.targetLow, mmol: glucose.mmol))–\(WebGlucoseText.value(glucose.targetHigh, mmol: glucose.mmol)) \(unit)</title></rect>
            <line class="urgent" x1="0" x2="\(Int(width))" y1="\(format(y(glucose.urgentLow)))" y2="\(format(y(glucose.urgentLow)))"><title>urgent low \(WebGlucoseText.value(glucose.urgentLow, mmol: glucose.mmol)) \(unit)</title></line>

            """
        for mark in glucose.marks where mark.time >= start {
            let top = mark.kind == "bolus" ? 14.0 : 30.0
            svg += "<g class=\"mark \(mark.kind)\" data-time=\"\(Int64((mark.time.timeIntervalSince1970 * 1000).rounded()))\">"
                + "<title>\(WebHTML.escape(mark.text)) at \(WebHTML.clock(mark.time))</title>"
                + "<line x1=\"\(x(mark.time))\" x2=\"\(x(mark.time))\" y1=\"\(format(top + 4))\" y2=\"\(Int(height))\"></line>"
                + "<text x=\"\(x(mark.time))\" y=\"\(format(top))\" text-anchor=\"middle\">\(WebHTML.escape(mark.text.components(separatedBy: " ").prefix(2).joined(separator: " ")))</text></g>\n"
        }
        let stale = glucose.readings.last.map { now.timeIntervalSince($0.time) > WebPage.staleAfter } ?? true
        for reading in glucose.readings where reading.time >= start {
            let cls = reading.mgdl < glucose.targetLow ? "low" : reading.mgdl > glucose.targetHigh ? "high" : "in"
            let title = "\(WebGlucoseText.both(reading.mgdl, mmol: glucose.mmol)) at \(WebHTML.clock(reading.time))"
            svg += "<circle class=\"pt \(cls)\(stale ? " old" : "")\" cx=\"\(x(reading.time))\" cy=\"\(format(y(reading.mgdl)))\" r=\"4\" "
                + "data-mgdl=\"\(format(reading.mgdl))\" data-time=\"\(Int64((reading.time.timeIntervalSince1970 * 1000).rounded()))\">"
                + "<title>\(WebHTML.escape(title))</title></circle>\n"
        }
        return svg + "</svg>"
    }

    static func format(_ value: Double) -> String { String(format: "%.1f", value) }
}

/// Glucose values as text in either unit.
enum WebGlucoseText {
    /// `value` (mg/dL) in the chosen unit, without the unit.
    static func value(_ mgdl: Double, mmol: Bool) -> String {
        mmol ? String(format: "%.1f", mgdl / 18.0182) : String(Int(mgdl.rounded()))
    }

    /// "112 mg/dL (6.2 mmol/L)", the profile's unit first.
    static func both(_ mgdl: Double, mmol: Bool) -> String {
        let mg = "\(value(mgdl, mmol: false)) mg/dL", mm = "\(value(mgdl, mmol: true)) mmol/L"
        return mmol ? "\(mm) (\(mg))" : "\(mg) (\(mm))"
    }

    /// The arrow of a Nightscout direction.
    static func arrow(_ direction: String?) -> String {
        switch direction {
        case "DoubleUp": return "⇈"
        case "SingleUp": return "↑"
        case "FortyFiveUp": return "↗"
        case "Flat": return "→"
        case "FortyFiveDown": return "↘"
        case "SingleDown": return "↓"
        case "DoubleDown": return "⇊"
        default: return ""
        }
    }
}
