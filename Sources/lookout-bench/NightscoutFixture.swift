#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A deterministic JSON array of Nightscout `entries` (CGM readings), as `/api/v1/entries.json`
/// returns them: the same bytes for the same size on every run and machine.
enum NightscoutFixture {
    /// The JSON text, at least `bytes` long (whole entries only), and how many entries it holds.
    static func entries(bytes: Int) -> (json: [UInt8], count: Int) {
        var random = SplitMix64(seed: 0x4C6F_6F6B_6F75_74)  // "Lookout"
        var out: [UInt8] = []
        out.reserveCapacity(bytes + 1024)
        out.append(UInt8(ascii: "["))
        var count = 0
        var date: Int64 = 1_600_000_000_000
        while out.count < bytes {
            if count > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: entry(date: date, random: &random).utf8)
            count += 1
            date += 300_000 + Int64(random.next() % 2_000)  // every 5 minutes, some jitter
        }
        out.append(UInt8(ascii: "]"))
        return (out, count)
    }

    private static let devices = ["xDrip-DexcomG6", "xDrip-LibreReceiver", "share2", "loop://iPhone"]
    private static let directions = ["Flat", "FortyFiveUp", "FortyFiveDown", "SingleUp", "SingleDown", "DoubleUp", "DoubleDown"]

    private static func entry(date: Int64, random: inout SplitMix64) -> String {
        let id = hex(random.next(), digits: 16) + hex(random.next(), digits: 8)
        let device = devices[Int(random.next() % UInt64(devices.count))]
        let when = isoDate(milliseconds: date)
        let sgv = 40 + Int(random.next() % 361)
        let delta = Double(Int(random.next() % 201) - 100) / 10  // -10.0 … 10.0
        let direction = directions[Int(random.next() % UInt64(directions.count))]
        let filtered = fixed3(random.next() % 300_000_000)
        let unfiltered = fixed3(random.next() % 300_000_000)
        let rssi = 100 - Int(random.next() % 30)
        let noise = 1 + Int(random.next() % 4)
        let offset = [0, 60, 120, -300][Int(random.next() % 4)]
        return #"{"_id":"\#(id)","device":"\#(device)","date":\#(date),"dateString":"\#(when)","sgv":\#(sgv),"#
            + #""delta":\#(fixed1(delta)),"direction":"\#(direction)","type":"sgv","filtered":\#(filtered),"#
            + #""unfiltered":\#(unfiltered),"rssi":\#(rssi),"noise":\#(noise),"sysTime":"\#(when)","utcOffset":\#(offset)}"#
    }

    private static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        let padded = String(repeating: "0", count: max(0, 16 - text.count)) + text
        return String(padded.suffix(digits))
    }

    /// 123456789 → "123456.789".
    private static func fixed3(_ thousandths: UInt64) -> String {
        let fraction = String(thousandths % 1000)
        return "\(thousandths / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// -1.5 → "-1.5", 2 → "2.0".
    private static func fixed1(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        let sign = tenths < 0 ? "-" : ""
        return "\(sign)\(abs(tenths) / 10).\(abs(tenths) % 10)"
    }

    /// 1600000000000 → "2020-09-13T12:26:40.000Z".
    private static func isoDate(milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let millis = Int(milliseconds % 1000)
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(ms)Z"
    }
}

/// A small deterministic random generator (SplitMix64), so fixtures never depend on the platform.
struct SplitMix64 {
    private var state: UInt64

    /// A generator starting from `seed`.
    init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
