import Foundation

/// Blood glucose as people with diabetes read it: a value with its unit, in the unit they use,
/// the other unit in parentheses where space allows, and the trend as an arrow. The one
/// formatter behind `nightscout.format_bg`, the demo and the ready scripts.
public enum GlucoseText {
    /// The unit a person reads glucose in.
    public enum Unit: String, Sendable, CaseIterable {
        /// mg/dL, shown as a whole number.
        case mgdl = "mg/dL"
        /// mmol/L, shown with one decimal.
        case mmol = "mmol/L"

        /// Parses the spellings used in config and on the wire (`mg/dL`, `mg/dl`, `mgdl`, `mmol`,
        /// `mmol/L`, `mmol/l`, case-insensitive); `nil` otherwise.
        public init?(text: String) {
            switch text.lowercased().replacingOccurrences(of: " ", with: "") {
            case "mg/dl", "mgdl", "mg": self = .mgdl
            case "mmol", "mmol/l", "mmoll": self = .mmol
            default: return nil
            }
        }

        /// The other unit.
        public var other: Unit { self == .mgdl ? .mmol : .mgdl }
    }

    /// mmol/L per mg/dL (xDrip4iOS's factor, seed 001).
    public static let mmolPerMgdl = 0.0555

    /// The number alone in `unit` (`132`, `7.3`) for a value in mg/dL, rounded half away from
    /// zero as an upload stores it (`upload_bg` of 100.5 stores 101, seed 001's `sgv`), not
    /// `printf`'s half to even (which shows 100).
    public static func number(mgdl: Double, in unit: Unit) -> String {
        // Rounded first, so `%.0f`/`%.1f` only print; `String(format:)` never traps, whatever the number.
        switch unit {
        case .mgdl: return String(format: "%.0f", mgdl.rounded())
        case .mmol: return String(format: "%.1f", (mgdl * mmolPerMgdl * 10).rounded() / 10)
        }
    }

    /// `132 mg/dL (7.3 mmol/L) →`: a value given in mg/dL, in `unit`, with the other unit in
    /// parentheses when `other` is true and the arrow of `direction` when one is given.
    public static func format(mgdl: Double, unit: Unit = .mgdl, other: Bool = true, direction: String? = nil) -> String {
        var text = number(mgdl: mgdl, in: unit) + " " + unit.rawValue
        if other { text += " (" + number(mgdl: mgdl, in: unit.other) + " " + unit.other.rawValue + ")" }
        let arrow = GlucoseTrend.arrow(direction)
        if !arrow.isEmpty { text += " " + arrow }
        return text
    }
}
