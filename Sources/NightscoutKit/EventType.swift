import Foundation

/// A treatment's `eventType`. Every type named in the spec (§4.3, §5.1) is a constant; any other
/// text (unknown or app-specific) is kept as-is.
public struct EventType: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The wire text.
    public var rawValue: String
    /// Creates an event type from its wire text.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `BG Check`.
    public static let bgCheck = EventType(rawValue: "BG Check")
    /// `Snack Bolus`.
    public static let snackBolus = EventType(rawValue: "Snack Bolus")
    /// `Meal Bolus`.
    public static let mealBolus = EventType(rawValue: "Meal Bolus")
    /// `Correction Bolus`.
    public static let correctionBolus = EventType(rawValue: "Correction Bolus")
    /// `Carb Correction`.
    public static let carbCorrection = EventType(rawValue: "Carb Correction")
    /// `Combo Bolus`.
    public static let comboBolus = EventType(rawValue: "Combo Bolus")
    /// `Announcement`.
    public static let announcement = EventType(rawValue: "Announcement")
    /// `Note`.
    public static let note = EventType(rawValue: "Note")
    /// `Question`.
    public static let question = EventType(rawValue: "Question")
    /// `Exercise`.
    public static let exercise = EventType(rawValue: "Exercise")
    /// `Site Change`.
    public static let siteChange = EventType(rawValue: "Site Change")
    /// `Sensor Start`.
    public static let sensorStart = EventType(rawValue: "Sensor Start")
    /// `Sensor Change`.
    public static let sensorChange = EventType(rawValue: "Sensor Change")
    /// `Pump Battery Change`.
    public static let pumpBatteryChange = EventType(rawValue: "Pump Battery Change")
    /// `Insulin Change`.
    public static let insulinChange = EventType(rawValue: "Insulin Change")
    /// `Temp Basal`.
    public static let tempBasal = EventType(rawValue: "Temp Basal")
    /// `Profile Switch`.
    public static let profileSwitch = EventType(rawValue: "Profile Switch")
    /// `Temporary Target`.
    public static let temporaryTarget = EventType(rawValue: "Temporary Target")
    /// `Temporary Override`.
    public static let temporaryOverride = EventType(rawValue: "Temporary Override")
    /// `Temporary Override Cancel` (Loop remote command).
    public static let temporaryOverrideCancel = EventType(rawValue: "Temporary Override Cancel")
    /// `OpenAPS Offline`.
    public static let openAPSOffline = EventType(rawValue: "OpenAPS Offline")
    /// `Bolus Wizard`.
    public static let bolusWizard = EventType(rawValue: "Bolus Wizard")
    /// `Suspend Pump`.
    public static let suspendPump = EventType(rawValue: "Suspend Pump")
    /// `Resume Pump`.
    public static let resumePump = EventType(rawValue: "Resume Pump")
    /// `Bolus` (xDrip4iOS uploads).
    public static let bolus = EventType(rawValue: "Bolus")
    /// `Carbs` (xDrip4iOS uploads).
    public static let carbs = EventType(rawValue: "Carbs")
    /// `Remote Carbs Entry` (Loop remote command).
    public static let remoteCarbsEntry = EventType(rawValue: "Remote Carbs Entry")
    /// `Remote Bolus Entry` (Loop remote command).
    public static let remoteBolusEntry = EventType(rawValue: "Remote Bolus Entry")

    /// Every event type named in the spec and seeds.
    public static let known: [EventType] = [
        .bgCheck, .snackBolus, .mealBolus, .correctionBolus, .carbCorrection, .comboBolus, .announcement,
        .note, .question, .exercise, .siteChange, .sensorStart, .sensorChange, .pumpBatteryChange,
        .insulinChange, .tempBasal, .profileSwitch, .temporaryTarget, .temporaryOverride,
        .temporaryOverrideCancel, .openAPSOffline, .bolusWizard, .suspendPump, .resumePump, .bolus, .carbs,
        .remoteCarbsEntry, .remoteBolusEntry,
    ]

    /// `true` when the text is one of `known`.
    public var isKnown: Bool { EventType.known.contains(self) }
    /// The wire text.
    public var description: String { rawValue }
    /// Decodes the wire text.
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    /// Encodes the wire text.
    public func encode(to encoder: any Encoder) throws { var c = encoder.singleValueContainer(); try c.encode(rawValue) }
}
