import Foundation
import LookoutWire

/// A trend arrow (`direction`). Known names are constants; any other text is kept as-is.
public struct TrendDirection: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The wire text.
    public var rawValue: String
    /// Creates a direction from its wire text.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// No arrow.
    public static let none = TrendDirection(rawValue: "NONE")
    /// Rising fast (> 3.5 mg/dL/min).
    public static let doubleUp = TrendDirection(rawValue: "DoubleUp")
    /// Rising (> 2 mg/dL/min).
    public static let singleUp = TrendDirection(rawValue: "SingleUp")
    /// Rising slowly (> 1 mg/dL/min).
    public static let fortyFiveUp = TrendDirection(rawValue: "FortyFiveUp")
    /// Steady.
    public static let flat = TrendDirection(rawValue: "Flat")
    /// Falling slowly.
    public static let fortyFiveDown = TrendDirection(rawValue: "FortyFiveDown")
    /// Falling.
    public static let singleDown = TrendDirection(rawValue: "SingleDown")
    /// Falling fast.
    public static let doubleDown = TrendDirection(rawValue: "DoubleDown")
    /// Trend cannot be computed.
    public static let notComputable = TrendDirection(rawValue: "NOT COMPUTABLE")
    /// Rate out of range.
    public static let rateOutOfRange = TrendDirection(rawValue: "RATE OUT OF RANGE")

    /// The direction xDrip4iOS assigns to a slope in mg/dL per minute (seed 001 `slopeName`):
    /// > 3.5 DoubleUp, > 2 SingleUp, > 1 FortyFiveUp, > −1 Flat, > −2 FortyFiveDown,
    /// > −3.5 SingleDown, otherwise DoubleDown. A non-finite slope is `NOT COMPUTABLE`.
    public init(slopeMgdlPerMinute slope: Double) {
        self.init(rawValue: GlucoseTrend.name(slopeMgdlPerMinute: slope))  // the house's one rule (LookoutWire)
    }

    /// The Dexcom/Nightscout trend number (`trend`): NONE 0, DoubleUp 1 … DoubleDown 7,
    /// NOT COMPUTABLE 8, RATE OUT OF RANGE 9 (NightscoutKit's `NotComputable`/`RateOutOfRange`
    /// spellings included); `nil` for unknown text.
    public var trendNumber: Int? { GlucoseTrend.number(rawValue) }

    /// The direction for a trend number (0–9), or `nil`.
    public init?(trendNumber: Int) {
        let names = ["NONE", "DoubleUp", "SingleUp", "FortyFiveUp", "Flat", "FortyFiveDown", "SingleDown",
                     "DoubleDown", "NOT COMPUTABLE", "RATE OUT OF RANGE"]
        guard names.indices.contains(trendNumber) else { return nil }
        self.init(rawValue: names[trendNumber])
    }

    /// The wire text.
    public var description: String { rawValue }
    /// Decodes the wire text.
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    /// Encodes the wire text.
    public func encode(to encoder: any Encoder) throws { var c = encoder.singleValueContainer(); try c.encode(rawValue) }
}
