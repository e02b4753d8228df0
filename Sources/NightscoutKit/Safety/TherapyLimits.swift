import Foundation

/// Host-configured therapy limits for Loop remote commands, enforced by `RemoteCommandGuard`.
///
/// Limits come from the host configuration only; scripts never see a mutable copy. Every field
/// defaults to the safe value, so a limits value built with `TherapyLimits()` (or decoded from an
/// empty object) refuses every command: maxima are 0, no override names are allowed, and
/// `live` is false (dry run).
///
/// Amounts are accounted in steps of 0.01 (U or g). A configured maximum that is not a multiple
/// of 0.01 is rounded *down* to one (2.555 U behaves as 2.55 U).
public struct TherapyLimits: Sendable, Equatable, Codable {
    /// The largest single bolus in insulin units (0: bolus refused).
    public var maxBolusUnits: Double
    /// The largest single carb entry in grams (0: carbs refused).
    public var maxCarbsGrams: Double
    /// The largest bolus total in any rolling 60 minutes, counting sent and in-flight boluses
    /// (0: bolus refused).
    public var maxBolusUnitsPerHour: Double
    /// The largest carb total in any rolling 60 minutes, counting sent and in-flight entries
    /// (0: carbs refused).
    public var maxCarbsGramsPerHour: Double
    /// The least time in seconds between any two commands of a site that were sent or attempted
    /// (in flight, sent, or failed), whatever their kind.
    public var minimumInterval: TimeInterval
    /// The override preset names that may be started (exact, case-sensitive match). Empty: no
    /// override may be started and `cancelOverride` is refused too.
    public var allowedOverrides: Set<String>
    /// The Remote 2.0 toggles that may be switched: `closed_loop`, `autobolus` (empty: both
    /// refused).
    public var allowedToggles: Set<String>
    /// Seconds during which a command identical to a sent or in-flight one is refused as a
    /// duplicate (same kind and amount, or same override name).
    public var duplicateWindow: TimeInterval
    /// Whether allowed commands may be sent. False (the default) is a dry run: the guard
    /// evaluates every limit, audits the result, and never hands out a sendable ticket.
    public var live: Bool

    /// The largest value accepted for an amount limit (U or g); larger values fail validation.
    public static let largestAmountLimit: Double = 1_000_000

    /// Limits that refuse everything (the defaults), or the given values.
    public init(
        maxBolusUnits: Double = 0, maxCarbsGrams: Double = 0,
        maxBolusUnitsPerHour: Double = 0, maxCarbsGramsPerHour: Double = 0,
        minimumInterval: TimeInterval = 0, allowedOverrides: Set<String> = [],
        duplicateWindow: TimeInterval = 0, live: Bool = false, allowedToggles: Set<String> = []
    ) {
        self.allowedToggles = allowedToggles
        self.maxBolusUnits = maxBolusUnits
        self.maxCarbsGrams = maxCarbsGrams
        self.maxBolusUnitsPerHour = maxBolusUnitsPerHour
        self.maxCarbsGramsPerHour = maxCarbsGramsPerHour
        self.minimumInterval = minimumInterval
        self.allowedOverrides = allowedOverrides
        self.duplicateWindow = duplicateWindow
        self.live = live
    }

    /// The toggle kinds `allowedToggles` may hold.
    public static let toggleKinds: Set<String> = ["closed_loop", "autobolus"]

    /// Limits that refuse every command (all maxima 0, no overrides, dry run).
    public static let refuseAll = TherapyLimits()

    /// Every problem with these limits, empty when they are valid: each number must be finite
    /// and non-negative, amount limits at most `largestAmountLimit`, override names non-empty
    /// and without leading or trailing whitespace.
    public var problems: [TherapyLimitsProblem] {
        var out: [TherapyLimitsProblem] = []
        let numbers: [(String, Double, Bool)] = [
            ("maxBolusUnits", maxBolusUnits, true), ("maxCarbsGrams", maxCarbsGrams, true),
            ("maxBolusUnitsPerHour", maxBolusUnitsPerHour, true),
            ("maxCarbsGramsPerHour", maxCarbsGramsPerHour, true),
            ("minimumInterval", minimumInterval, false), ("duplicateWindow", duplicateWindow, false),
        ]
        for (field, value, isAmount) in numbers {
            if !value.isFinite {
                out.append(.notFinite(field: field))
            } else if value < 0 {
                out.append(.negative(field: field, value: value))
            } else if isAmount, value > Self.largestAmountLimit {
                out.append(.tooLarge(field: field, value: value, largest: Self.largestAmountLimit))
            }
        }
        for name in allowedOverrides.sorted()
        where name.isEmpty || name.trimmingCharacters(in: .whitespacesAndNewlines) != name {
            out.append(.badOverrideName(name))
        }
        for name in allowedOverrides.sorted() where name.utf8.count > AuditText.fieldLimit {
            out.append(.overrideNameTooLong(bytes: name.utf8.count))
        }
        for name in allowedToggles.sorted() where !Self.toggleKinds.contains(name) {
            out.append(.unknownToggle(name))
        }
        return out
    }

    /// These limits, or `TherapyLimitsError` listing every problem.
    public func validated() throws(TherapyLimitsError) -> TherapyLimits {
        let problems = self.problems
        if !problems.isEmpty { throw TherapyLimitsError(problems: problems) }
        return self
    }

    private enum CodingKeys: String, CodingKey {
        case maxBolusUnits, maxCarbsGrams, maxBolusUnitsPerHour, maxCarbsGramsPerHour
        case minimumInterval, allowedOverrides, duplicateWindow, live, allowedToggles
    }

    /// Decodes limits; a missing key takes its safe default and invalid values throw
    /// `DecodingError.dataCorrupted` naming every problem.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            maxBolusUnits: try c.decodeIfPresent(Double.self, forKey: .maxBolusUnits) ?? 0,
            maxCarbsGrams: try c.decodeIfPresent(Double.self, forKey: .maxCarbsGrams) ?? 0,
            maxBolusUnitsPerHour: try c.decodeIfPresent(Double.self, forKey: .maxBolusUnitsPerHour) ?? 0,
            maxCarbsGramsPerHour: try c.decodeIfPresent(Double.self, forKey: .maxCarbsGramsPerHour) ?? 0,
            minimumInterval: try c.decodeIfPresent(Double.self, forKey: .minimumInterval) ?? 0,
            allowedOverrides: Set(try c.decodeIfPresent([String].self, forKey: .allowedOverrides) ?? []),
            duplicateWindow: try c.decodeIfPresent(Double.self, forKey: .duplicateWindow) ?? 0,
            live: try c.decodeIfPresent(Bool.self, forKey: .live) ?? false,
            allowedToggles: Set(try c.decodeIfPresent([String].self, forKey: .allowedToggles) ?? []))
        let problems = self.problems
        if !problems.isEmpty {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath,
                debugDescription: TherapyLimitsError(problems: problems).description))
        }
    }

    /// Encodes every field; override names are written sorted.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(maxBolusUnits, forKey: .maxBolusUnits)
        try c.encode(maxCarbsGrams, forKey: .maxCarbsGrams)
        try c.encode(maxBolusUnitsPerHour, forKey: .maxBolusUnitsPerHour)
        try c.encode(maxCarbsGramsPerHour, forKey: .maxCarbsGramsPerHour)
        try c.encode(minimumInterval, forKey: .minimumInterval)
        try c.encode(allowedOverrides.sorted(), forKey: .allowedOverrides)
        try c.encode(duplicateWindow, forKey: .duplicateWindow)
        try c.encode(live, forKey: .live)
        try c.encode(allowedToggles.sorted(), forKey: .allowedToggles)
    }
}

/// One problem found by `TherapyLimits.problems`.
public enum TherapyLimitsProblem: Sendable, Equatable, CustomStringConvertible {
    /// The field is NaN or infinite.
    case notFinite(field: String)
    /// The field is below zero.
    case negative(field: String, value: Double)
    /// The amount limit is above `largest`.
    case tooLarge(field: String, value: Double, largest: Double)
    /// An allowed override name is empty or has leading/trailing whitespace.
    case badOverrideName(String)
    /// An allowed override name is longer than the audit log keeps (`AuditText.fieldLimit`).
    case overrideNameTooLong(bytes: Int)
    /// An allowed toggle is not `closed_loop` or `autobolus`.
    case unknownToggle(String)

    /// A human sentence naming the field and the rule.
    public var description: String {
        switch self {
        case .notFinite(let field): return "\(field) must be a finite number"
        case .negative(let field, let value): return "\(field) must not be negative (got \(value))"
        case .tooLarge(let field, let value, let largest):
            return "\(field) must be at most \(largest) (got \(value))"
        case .badOverrideName(let name):
            return "allowedOverrides: name \"\(name)\" must be non-empty without leading or trailing whitespace"
        case .overrideNameTooLong(let bytes):
            return "allowedOverrides: a name of \(bytes) bytes is longer than the \(AuditText.fieldLimit) bytes allowed"
        case .unknownToggle(let name):
            return "allowedToggles: unknown toggle \"\(name)\" (known: autobolus, closed_loop)"
        }
    }
}

/// Invalid therapy limits: every problem found.
public struct TherapyLimitsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The problems, in field order.
    public var problems: [TherapyLimitsProblem]

    /// An error for the given problems.
    public init(problems: [TherapyLimitsProblem]) { self.problems = problems }

    /// `invalid therapy limits: ` followed by the problems joined with `; `.
    public var description: String {
        "invalid therapy limits: " + problems.map(\.description).joined(separator: "; ")
    }
}
