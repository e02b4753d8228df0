import Foundation

/// Blood glucose units and conversion. The factor is xDrip4iOS's (seed 001 `mmolToMgdl`,
/// `ConstantsBloodGlucose.mmollToMgdl = 18.01801801801802`, i.e. 1 / 0.0555).
public enum GlucoseUnit: String, Sendable, Hashable, Codable, CaseIterable {
    /// Milligrams per decilitre (`mg/dl`).
    case milligramsPerDeciliter = "mg/dl"
    /// Millimoles per litre (`mmol`).
    case millimolesPerLiter = "mmol"

    /// mg/dL per mmol/L.
    public static let mgdlPerMmol: Double = 18.01801801801802
    /// mmol/L per mg/dL.
    public static let mmolPerMgdl: Double = 0.0555

    /// Parses the spellings found on the wire (`mg/dl`, `mg/dL`, `mgdl`, `mmol`, `mmol/L`,
    /// `mmol/l`, case-insensitive); `nil` otherwise.
    public init?(wireText: String) {
        switch wireText.lowercased().replacingOccurrences(of: " ", with: "") {
        case "mg/dl", "mgdl", "mg": self = .milligramsPerDeciliter
        case "mmol", "mmol/l", "mmoll": self = .millimolesPerLiter
        default: return nil
        }
    }

    /// Decodes leniently (see `init(wireText:)`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let s = try c.decode(String.self)
        guard let u = GlucoseUnit(wireText: s) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "Unknown glucose unit \(s)")
        }
        self = u
    }

    /// Converts mmol/L to mg/dL.
    public static func mgdl(fromMmol mmol: Double) -> Double { mmol * mgdlPerMmol }
    /// Converts mg/dL to mmol/L.
    public static func mmol(fromMgdl mgdl: Double) -> Double { mgdl * mmolPerMgdl }

    /// Converts `value` given in this unit to `target`.
    public func convert(_ value: Double, to target: GlucoseUnit) -> Double {
        switch (self, target) {
        case (.milligramsPerDeciliter, .millimolesPerLiter): return GlucoseUnit.mmol(fromMgdl: value)
        case (.millimolesPerLiter, .milligramsPerDeciliter): return GlucoseUnit.mgdl(fromMmol: value)
        default: return value
        }
    }
}
