/// The one trend rule of the house: the arrow name for a glucose slope, used by NightscoutKit
/// (`nightscout.direction()`), the Nightscout simulator's generator and the demo. It lives in
/// LookoutWire because the simulator shares no model code with the Kits (Package.swift's layers).
public enum GlucoseTrend {
    /// The direction name xDrip4iOS assigns to a slope in mg/dL per minute (seed 001 `slopeName`):
    /// > 3.5 DoubleUp, > 2 SingleUp, > 1 FortyFiveUp, > −1 Flat, > −2 FortyFiveDown,
    /// > −3.5 SingleDown, otherwise DoubleDown; `NOT COMPUTABLE` for a non-finite slope.
    public static func name(slopeMgdlPerMinute slope: Double) -> String {
        guard slope.isFinite else { return "NOT COMPUTABLE" }
        if slope > 3.5 { return "DoubleUp" }
        if slope > 2.0 { return "SingleUp" }
        if slope > 1.0 { return "FortyFiveUp" }
        if slope > -1.0 { return "Flat" }
        if slope > -2.0 { return "FortyFiveDown" }
        if slope > -3.5 { return "SingleDown" }
        return "DoubleDown"
    }

    /// The slope between two readings in mg/dL per minute (times in epoch milliseconds); `nil`
    /// when they are not in order.
    public static func slope(from previous: (time: Int64, mgdl: Double), to current: (time: Int64, mgdl: Double)) -> Double? {
        guard current.time > previous.time else { return nil }
        return (current.mgdl - previous.mgdl) / (Double(current.time - previous.time) / 60_000)
    }

    /// The Dexcom/Nightscout trend number of a direction name (NONE 0, DoubleUp 1 … DoubleDown 7,
    /// NOT COMPUTABLE 8, RATE OUT OF RANGE 9); `nil` for unknown text.
    public static func number(_ name: String) -> Int? {
        switch name {
        case "NONE": return 0
        case "DoubleUp": return 1
        case "SingleUp": return 2
        case "FortyFiveUp": return 3
        case "Flat": return 4
        case "FortyFiveDown": return 5
        case "SingleDown": return 6
        case "DoubleDown": return 7
        case "NOT COMPUTABLE", "NotComputable": return 8
        case "RATE OUT OF RANGE", "RateOutOfRange": return 9
        default: return nil
        }
    }

    /// The arrow people read for a direction name: ↑↑ ↑ ↗ → ↘ ↓ ↓↓; "?" when the trend cannot be
    /// computed or is out of range; "" for no or unknown direction.
    public static func arrow(_ name: String?) -> String {
        switch name {
        case "DoubleUp": return "↑↑"
        case "SingleUp": return "↑"
        case "FortyFiveUp": return "↗"
        case "Flat": return "→"
        case "FortyFiveDown": return "↘"
        case "SingleDown": return "↓"
        case "DoubleDown": return "↓↓"
        case "NOT COMPUTABLE", "NotComputable", "RATE OUT OF RANGE", "RateOutOfRange": return "?"
        default: return ""
        }
    }
}
