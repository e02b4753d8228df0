import Foundation
import LookoutSim
import LookoutWire

// This file imports LookoutSim only: NightscoutKit has its own `JSONValue`, and the module name
// `LookoutSim` is shadowed by the enum of that name, so the simulator's type cannot be qualified.

/// The year of CGM readings P3 seeds: `entries` documents as a v3 upload stores them (with
/// `identifier`, `srvCreated` and `srvModified`, so HISTORY returns them), the same on every run.
enum HistoryFixture {
    /// 2023-05-01T00:00:00Z, the first reading.
    static let start: Int64 = 1_682_899_200_000

    /// `count` readings 5 minutes apart, and the sum of their `sgv`.
    static func entries(count: Int) -> (documents: [JSONValue], sgvSum: Int) {
        var random = SplitMix64(seed: 0x4C6F_6F6B_6F75_74)
        let directions = ["Flat", "FortyFiveUp", "FortyFiveDown", "SingleUp", "SingleDown", "DoubleUp", "DoubleDown"]
        let device = "xDrip-DexcomG6"
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var documents: [JSONValue] = []
        documents.reserveCapacity(count)
        var sum = 0
        for i in 0..<count {
            let date = start + Int64(i) * 300_000 + Int64(random.next() % 2_000)
            let uploaded = date + 20_000 + Int64(random.next() % 10_000)  // distinct: dates are 298+ s apart
            let sgv = 40 + Int(random.next() % 361)
            sum += sgv
            let when = formatter.string(from: Date(timeIntervalSince1970: Double(date) / 1000))
            documents.append(.object([
                "identifier": .string(NightscoutSimulator.v3Identifier(device: device, date: date, eventType: nil)),
                "device": .string(device), "app": "xDrip", "type": "sgv", "date": .int(date), "dateString": .string(when),
                "sysTime": .string(when), "utcOffset": 0, "sgv": .int(Int64(sgv)),
                "delta": .double(Double(Int(random.next() % 201) - 100) / 10),
                "direction": .string(directions[Int(random.next() % UInt64(directions.count))]),
                "noise": .int(Int64(1 + random.next() % 4)), "filtered": .int(Int64(random.next() % 300_000)),
                "unfiltered": .int(Int64(random.next() % 300_000)), "rssi": .int(Int64(100 - random.next() % 30)),
                "srvCreated": .int(uploaded), "srvModified": .int(uploaded),
            ]))
        }
        return (documents, sum)
    }
}
