import Foundation
import LookoutModules
import LookoutSim
import LookoutWire

/// What the demo shows, redrawn every second on a terminal: the BG chart, the latest reading, the
/// Signal K side of the bridge, each script's state and the last log lines.
struct DemoView {
    let nightscoutURL: URL
    let signalKURL: URL
    /// The demo's LOOKOUT_HOME, for `lookout ack` from another terminal.
    let home: String
    /// Story time, for the age of the newest reading.
    let clock: DemoClock
    /// The web view's one-time sign-in link, when it is on.
    var webLink: String? = nil
    var width = 64

    struct Snapshot {
        var entries: [(date: Double, sgv: Double, direction: String)]
        var boat: [(String, String)]
        /// The boat's own readings as people read them (`SOG 6.2 kn`), in the display units the
        /// Signal K simulator serves with each path's meta.
        var readings: [String] = []
        var scripts: [(String, String)]
        var alerts: [String]
        var log: [String]
    }

    /// The boat's readings the view shows, with their labels.
    static let readingPaths = [
        ("SOG", "navigation.speedOverGround"), ("COG", "navigation.courseOverGroundTrue"),
        ("wind", "environment.wind.speedTrue"), ("from", "environment.wind.directionTrue"),
        ("depth", "environment.depth.belowTransducer"), ("water", "environment.water.temperature"),
    ]

    /// How to acknowledge the demo's alerts (its state folder is a temporary one).
    var ackHint: String { "acknowledge from another terminal: LOOKOUT_HOME=\(home) lookout ack urgent-low" }

    func render(_ s: Snapshot, color: Bool) -> String {
        var out = ["Lookout demo: simulated CGM and boat data, no accounts; one reading every few seconds stands for",
                   "five minutes of a night. Ctrl-C stops it.",
                   "Nightscout \(nightscoutURL.absoluteString)   Signal K \(signalKURL.absoluteString)"]
            + (webLink.map { ["Web view (open once, e.g. on a phone-sized window): \($0)"] } ?? []) + [""]
        var chartOptions = ChartOptions()
        chartOptions.low = 70
        chartOptions.high = 180
        chartOptions.minimum = 40
        chartOptions.maximum = 200
        chartOptions.unit = "mg/dL"
        let series = ChartSeries(points: s.entries.map { .init(time: $0.date, value: $0.sgv) }, hasTimes: true)
        var chart = TerminalChart(width: width, height: 10)
        chart.color = color
        out.append(chart.render(series, options: chartOptions))
        if let last = s.entries.last {
            let age = max(0, Int(clock.now().timeIntervalSince1970 - last.date / 1000) / 60)
            out.append("BG " + GlucoseText.format(mgdl: last.sgv, direction: last.direction) + ", \(age) min old")
        }
        out.append("")
        out.append("Alerts:  " + (s.alerts.isEmpty ? "none firing" : s.alerts.joined(separator: "; ")))
        if !s.alerts.isEmpty { out.append("         " + ackHint) }
        if !s.readings.isEmpty { out.append("Boat:     " + s.readings.joined(separator: ", ")) }
        out.append("Signal K: " + (s.boat.isEmpty ? "(nothing published yet)" : s.boat.map { "\($0.0) = \($0.1)" }.joined(separator: ", ")))
        out.append("Scripts: " + s.scripts.map { "\($0.0) \($0.1)" }.joined(separator: " · "))
        out.append("")
        out += s.log
        return out.joined(separator: "\n")
    }
}
