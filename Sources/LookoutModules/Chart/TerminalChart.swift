/// A series drawn with braille characters for a terminal: a value axis on the left, the target
/// range marked, gaps in the data left as gaps, times below.
///
/// Without colour the target range's edges are dotted lines; with colour (ANSI) the range is a
/// green band and points below it red, above it yellow.
public struct TerminalChart: Sendable {
    /// Columns of the plot area.
    public var width = 60
    /// Rows of the plot area.
    public var height = 12
    /// ANSI colours: a green target band, red below, yellow above.
    public var color = false

    /// A chart of this size.
    public init(width: Int = 60, height: Int = 12) {
        self.width = width
        self.height = height
    }

    /// The chart as lines of text.
    public func render(_ series: ChartSeries, options: ChartOptions) -> String {
        var lines: [String] = []
        if let title = options.title { lines.append(title) }
        guard !series.points.isEmpty else {
            lines.append("(no data)")
            return lines.joined(separator: "\n")
        }
        let scale = ChartScale(series: series, options: options)
        var canvas = BrailleCanvas(columns: width, rows: height)
        let dotX = { (t: Double) in Int((scale.x(t) * Double(canvas.dotWidth - 1)).rounded()) }
        let dotY = { (v: Double) in Int(((1 - scale.y(v)) * Double(canvas.dotHeight - 1)).rounded()) }

        if !color {
            for edge in [options.low, options.high].compactMap({ $0 }) where edge > scale.v0 && edge < scale.v1 {
                for x in stride(from: 0, to: canvas.dotWidth, by: 4) { canvas.set(x, dotY(edge)) }
            }
        }
        let gap = series.gapThreshold
        var previous: ChartSeries.Point?
        for p in series.points {
            if let q = previous, p.time - q.time <= gap {
                canvas.line(dotX(q.time), dotY(q.value), dotX(p.time), dotY(p.value))
            } else {
                canvas.set(dotX(p.time), dotY(p.value))
            }
            previous = p
        }

        let edges = [options.low, options.high].compactMap { $0 }.filter { $0 >= scale.v0 && $0 <= scale.v1 }
        let labelWidth = ([scale.v1, scale.v0] + edges).map { ChartScale.valueLabel($0).count }.max() ?? 1
        for row in 0..<height {
            let top = scale.v1 - (scale.v1 - scale.v0) * Double(row) / Double(height)
            let bottom = scale.v1 - (scale.v1 - scale.v0) * Double(row + 1) / Double(height)
            var label = ""
            if row == 0 { label = ChartScale.valueLabel(scale.v1) }
            if row == height - 1 { label = ChartScale.valueLabel(scale.v0) }
            // A threshold's row is labelled with the threshold (70), not the axis end it shares a row with (64).
            for edge in edges where edge <= top && (edge > bottom || (row == height - 1 && edge >= bottom)) {
                label = ChartScale.valueLabel(edge)
            }
            var line = String(repeating: " ", count: labelWidth - label.count) + label + " ┤"
            let mid = (top + bottom) / 2
            for column in 0..<width {
                let ch = canvas.character(column: column, row: row)
                guard color else { line.append(ch); continue }
                let inBand = options.low.map { mid >= $0 } ?? false && options.high.map { mid <= $0 } ?? false
                var style = inBand ? "\u{1B}[42m" : ""
                if canvas.isSet(column: column, row: row) {
                    if let low = options.low, mid < low { style += "\u{1B}[31m" } else if let high = options.high, mid > high {
                        style += "\u{1B}[33m"
                    }
                }
                line += style.isEmpty ? String(ch) : style + String(ch) + "\u{1B}[0m"
            }
            lines.append(line)
        }
        let pad = String(repeating: " ", count: labelWidth + 2)
        if series.hasTimes {
            let span = scale.t1 - scale.t0
            let start = ChartScale.timeLabel(scale.t0, span: span, timeZone: options.timeZone)
            let end = ChartScale.timeLabel(scale.t1, span: span, timeZone: options.timeZone)
            let room = max(1, width - start.count - end.count)
            lines.append(pad + start + String(repeating: " ", count: room) + end)
        }
        if let unit = options.unit { lines[lines.count - 1] += "  " + unit }
        return lines.joined(separator: "\n")
    }
}
