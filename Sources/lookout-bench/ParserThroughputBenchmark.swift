import Foundation
import NightscoutKit
import SignalKKit

/// P9: the Kits' hand-written parsers against Foundation's `JSONSerialization` on the same bytes:
/// Signal K deltas parsed and applied to the data model (`SignalKServerMessage.parse` +
/// `SignalKDataModel.apply`), and a Nightscout API v3 page of 10,000 entries split into mirror
/// documents (`MirrorDocument.split`). These were once speed assertions in `swift test`
/// (`SignalKMessageTests`, `SyncManagerTests`); the tests now check behaviour only.
struct ParserThroughputBenchmark: Benchmark {
    let id = "P9"
    let summary = "Signal K delta parse+store and Nightscout v3 page split vs JSONSerialization"

    /// Least JSONSerialization/Kit time ratio that passes (the Kit parser at least as fast).
    static let target = 1.0

    func run(_ settings: BenchSettings) async throws -> BenchReport {
        let deltas = settings.quick ? 20_000 : 200_000
        var report = BenchReport(id: id, title: "parsers: \(deltas) Signal K deltas, a 10,000-entry v3 page (best of \(settings.bestOf))")

        // Signal K: one typical NMEA 2000 delta, parsed and stored `deltas` times.
        let frame = Array(#"{"context":"vessels.urn:mrn:imo:mmsi:230099999","updates":[{"source":{"label":"can0","type":"NMEA2000","pgn":129026,"src":"3"},"$source":"can0.3","timestamp":"2026-08-22T17:01:03.120Z","values":[{"path":"navigation.speedOverGround","value":3.21}]}]}"#.utf8)
        let frameData = Data(frame)
        let kit = try best(settings.bestOf) {
            var model = SignalKDataModel(selfContext: "vessels.urn:mrn:imo:mmsi:230099999")
            for _ in 0..<deltas {
                if case .delta(let d) = try SignalKServerMessage.parse(frame) { _ = model.apply(d) }
            }
            guard model.value("navigation.speedOverGround") == 3.21 else { throw BenchFailure("Signal K: the model lost the value") }
        }
        let foundation = try best(settings.bestOf) {
            var count = 0
            for _ in 0..<deltas where try JSONSerialization.jsonObject(with: frameData) is [String: Any] { count += 1 }
            guard count == deltas else { throw BenchFailure("JSONSerialization parsed \(count) of \(deltas) deltas") }
        }
        report.figures.append(BenchFigure("SignalKKit parse+store", kit, unit: "s", detail: String(format: "%.0f deltas/s", Double(deltas) / kit)))
        report.figures.append(BenchFigure("JSONSerialization parse", foundation, unit: "s",
                                          detail: String(format: "%.0f deltas/s", Double(deltas) / foundation)))
        report.ratios.append(BenchRatio("JSONSerialization/SignalKKit (deltas)", foundation / kit, target: Self.target, goal: .atLeast))

        // Nightscout: split and index a v3 page of 10,000 entries, vs parsing and re-serialising each.
        let body = Self.v3Page(entries: 10_000)
        let split = try best(settings.bestOf) {
            let documents = try MirrorDocument.split(v3Envelope: body)
            guard documents.count == 10_000 else { throw BenchFailure("split gave \(documents.count) documents") }
        }
        let reserialise = try best(settings.bestOf) {
            let object = try JSONSerialization.jsonObject(with: body) as? [String: Any]
            let result = object?["result"] as? [[String: Any]] ?? []
            let again = try result.map { try JSONSerialization.data(withJSONObject: $0) }
            guard again.count == 10_000 else { throw BenchFailure("JSONSerialization gave \(again.count) documents") }
        }
        report.figures.append(BenchFigure("MirrorDocument.split", split, unit: "s", detail: "\(body.count) bytes"))
        report.figures.append(BenchFigure("JSONSerialization + re-serialise", reserialise, unit: "s"))
        report.ratios.append(BenchRatio("JSONSerialization/split (v3 page)", reserialise / split, target: Self.target, goal: .atLeast))
        report.notes = ["times are process CPU seconds, best of \(settings.bestOf); ratios ≥ 1 mean the Kit is at least as fast"]
        return report
    }

    /// The least process CPU time `body` took over `runs` runs.
    private func best(_ runs: Int, _ body: () throws -> Void) throws -> Double {
        var best = Double.infinity
        for _ in 0..<runs {
            let t0 = BenchClock.processCPU()
            try body()
            best = min(best, BenchClock.processCPU() - t0)
        }
        return best
    }

    /// `{"status":200,"result":[…]}` with `entries` xDrip-like CGM entries.
    static func v3Page(entries: Int) -> Data {
        var parts: [String] = []
        parts.reserveCapacity(entries)
        for i in 0..<entries {
            let ms = 1_714_557_600_000 + Int64(i) * 300_000
            parts.append(#"{"type":"sgv","sgv":\#(100 + i % 80),"direction":"Flat","device":"xDrip-DexcomG6","#
                + #""date":\#(ms),"dateString":"\#(NightscoutDate(epochMilliseconds: ms).isoString)","#
                + #""utcOffset":0,"app":"xDrip","identifier":"id-\#(i)","srvModified":\#(ms + 1000),"#
                + #""srvCreated":\#(ms + 1000),"subject":"uploader","noise":1,"filtered":120000,"unfiltered":118000}"#)
        }
        return Data(("{\"status\":200,\"result\":[" + parts.joined(separator: ",") + "]}").utf8)
    }
}
