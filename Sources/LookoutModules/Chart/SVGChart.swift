import Foundation

/// A series as a standalone SVG document: the target range as a shaded band, the line (broken at
/// gaps), points coloured below/in/above range, value and time labels.
struct SVGChart: Sendable {
    var width = 800
    var height = 300

    func render(_ series: ChartSeries, options: ChartOptions) -> String {
        let left = 48.0, right = 12.0, top = options.title == nil ? 12.0 : 32.0, bottom = 28.0
        let w = Double(width) - left - right, h = Double(height) - top - bottom
        let scale = ChartScale(series: series, options: options)
        let px = { (t: Double) in left + scale.x(t) * w }
        let py = { (v: Double) in top + (1 - scale.y(v)) * h }
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" \
            font-family="sans-serif" font-size="11">
            <rect x="0" y="0" width="\(width)" height="\(height)" fill="#ffffff"/>

            """
        if let title = options.title {
            out += "<text x=\"\(f(left))\" y=\"20\" font-size=\"14\" font-weight=\"bold\">\(escape(title))</text>\n"
        }
        if let low = options.low, let high = options.high {
            let y0 = py(high), y1 = py(low)
            out += "<rect class=\"target\" x=\"\(f(left))\" y=\"\(f(y0))\" width=\"\(f(w))\" height=\"\(f(y1 - y0))\" fill=\"#d9f2d9\"/>\n"
        }
        out += "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(w))\" height=\"\(f(h))\" fill=\"none\" stroke=\"#999999\"/>\n"
        var ticks = [scale.v0, scale.v1]
        ticks += [options.low, options.high].compactMap { $0 }
        for v in ticks {
            out += "<text x=\"\(f(left - 4))\" y=\"\(f(py(v) + 4))\" text-anchor=\"end\">\(ChartScale.valueLabel(v))</text>\n"
        }
        if let unit = options.unit {
            out += "<text x=\"4\" y=\"\(f(top - 2))\">\(escape(unit))</text>\n"
        }
        if series.hasTimes, !series.points.isEmpty {
            let span = scale.t1 - scale.t0
            for i in 0...4 {
                let t = scale.t0 + span * Double(i) / 4
                let anchor = i == 0 ? "start" : i == 4 ? "end" : "middle"
                out += "<text x=\"\(f(px(t)))\" y=\"\(f(Double(height) - 8))\" text-anchor=\"\(anchor)\">"
                    + ChartScale.timeLabel(t, span: span, timeZone: options.timeZone) + "</text>\n"
            }
        }
        // The line, one polyline per run without a gap.
        let gap = series.gapThreshold
        var run: [String] = []
        var previous: ChartSeries.Point?
        func flush() {
            if run.count > 1 { out += "<polyline fill=\"none\" stroke=\"#333333\" stroke-width=\"1.5\" points=\"\(run.joined(separator: " "))\"/>\n" }
            run.removeAll()
        }
        for p in series.points {
            if let q = previous, p.time - q.time > gap { flush() }
            run.append("\(f(px(p.time))),\(f(py(p.value)))")
            previous = p
        }
        flush()
        for p in series.points {
            var fill = "#2e7d32"
            if let low = options.low, p.value < low { fill = "#c62828" }
            if let high = options.high, p.value > high { fill = "#f9a825" }
            out += "<circle cx=\"\(f(px(p.time)))\" cy=\"\(f(py(p.value)))\" r=\"2\" fill=\"\(fill)\"/>\n"
        }
        return out + "</svg>\n"
    }

    private func f(_ v: Double) -> String { String(format: "%.1f", v) }

    private func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
