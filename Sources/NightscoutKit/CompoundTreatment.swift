import Foundation

/// The single-valued treatment kinds a CGM app keeps locally (xDrip4iOS `TreatmentType`).
public enum TreatmentComponentKind: String, Sendable, Hashable, CaseIterable {
    /// Insulin (`insulin`, U).
    case insulin
    /// Carbohydrates (`carbs`, g).
    case carbs
    /// Exercise (`duration`, min).
    case exercise
    /// Blood glucose check (`glucose`, mg/dL).
    case bgCheck
    /// Temp basal (`rate` U/h, secondary `duration` min).
    case basal
    /// Site change.
    case siteChange
    /// Sensor start.
    case sensorStart
    /// Pump battery change.
    case pumpBatteryChange

    /// The id suffix xDrip4iOS appends to the Nightscout `_id` (`-insulin`, `-carbs`,
    /// `-exericse` (sic, as in xDrip4iOS, kept for interoperability), `-glucose`, `-rate`;
    /// empty for the event-only kinds).
    public var idExtension: String {
        switch self {
        case .insulin: return "-insulin"
        case .carbs: return "-carbs"
        case .exercise: return "-exericse"
        case .bgCheck: return "-glucose"
        case .basal: return "-rate"
        case .siteChange, .sensorStart, .pumpBatteryChange: return ""
        }
    }

    /// The event type used when uploading a single component without an original type.
    public var uploadEventType: EventType {
        switch self {
        case .insulin: return .bolus
        case .carbs: return .carbs
        case .exercise: return .exercise
        case .bgCheck: return .bgCheck
        case .basal: return .tempBasal
        case .siteChange: return .siteChange
        case .sensorStart: return .sensorStart
        case .pumpBatteryChange: return .pumpBatteryChange
        }
    }
}

/// One single-valued part of a Nightscout treatment (seed 001 `TreatmentEntry`). A treatment with
/// both `insulin` and `carbs` splits into two components with ids `<_id>-insulin` and
/// `<_id>-carbs`; `merge` puts them back together.
public struct TreatmentComponent: Sendable, Equatable {
    /// Local id: the Nightscout id plus `kind.idExtension`.
    public var id: String
    /// Treatment time.
    public var date: Date
    /// Kind.
    public var kind: TreatmentComponentKind
    /// Primary value (U, g, min, mg/dL, U/h; 0 for event-only kinds).
    public var value: Double
    /// Secondary value (duration in minutes for basal).
    public var secondaryValue: Double
    /// The original Nightscout `eventType`, when downloaded.
    public var nightscoutEventType: EventType?
    /// `enteredBy`.
    public var enteredBy: String?

    /// Creates a component.
    public init(id: String, date: Date, kind: TreatmentComponentKind, value: Double = 0, secondaryValue: Double = 0,
                nightscoutEventType: EventType? = nil, enteredBy: String? = nil) {
        self.id = id; self.date = date; self.kind = kind; self.value = value; self.secondaryValue = secondaryValue
        self.nightscoutEventType = nightscoutEventType; self.enteredBy = enteredBy
    }

    /// The Nightscout id: `id` without its kind's extension. (xDrip4iOS cuts at the first `-`,
    /// which breaks UUID ids; this removes only the known suffix.)
    public var baseID: String {
        let ext = kind.idExtension
        if !ext.isEmpty, id.hasSuffix(ext) { return String(id.dropLast(ext.count)) }
        if kind == .exercise, id.hasSuffix("-exercise") { return String(id.dropLast("-exercise".count)) }
        return id
    }

    /// Splits a downloaded treatment into components (seed 001 `TreatmentNSResponse`): one per
    /// `carbs`, `insulin`, `glucose` (converted to mg/dL unless `units` is mg/dL), `rate`
    /// (with `duration`), and one for `Exercise` (`duration`), `Site Change`, `Sensor Start`,
    /// `Pump Battery Change`. Zero or missing values give no component. A `glucose` without
    /// `units` is read in `siteUnits` (the site's or profile's units); without those it gives no
    /// component (the seed needs both: 5.5 read as mg/dL would be a dangerous low).
    public static func split(_ treatment: Treatment, siteUnits: GlucoseUnit? = nil) -> [TreatmentComponent] {
        var dropped: [String] = []
        return split(treatment, siteUnits: siteUnits, dropped: &dropped)
    }

    /// ``split(_:siteUnits:)``, appending to `dropped` why a part gave no component (a `glucose`
    /// whose unit is neither given nor known).
    public static func split(_ treatment: Treatment, siteUnits: GlucoseUnit?, dropped: inout [String]) -> [TreatmentComponent] {
        guard let time = treatment.time else { return [] }
        let base = treatment.common.primaryKey ?? ""
        let type = treatment.eventType
        var out: [TreatmentComponent] = []
        func add(_ kind: TreatmentComponentKind, _ value: Double = 0, _ secondary: Double = 0) {
            out.append(TreatmentComponent(id: base + kind.idExtension, date: time.date, kind: kind, value: value,
                                          secondaryValue: secondary, nightscoutEventType: type,
                                          enteredBy: treatment.enteredBy))
        }
        if let carbs = treatment.carbs, carbs > 0 { add(.carbs, carbs) }
        if let insulin = treatment.insulin, insulin > 0 { add(.insulin, insulin) }
        if type == .exercise { add(.exercise, treatment.duration ?? 0) }
        if let glucose = treatment.glucose, glucose > 0 {
            // Units given but unknown are not replaced by the site's: the value's unit is unknown.
            if let unit = treatment.units.map(GlucoseUnit.init(wireText:)) ?? siteUnits {
                add(.bgCheck, unit.convert(glucose, to: .milligramsPerDeciliter))
            } else {
                let why = treatment.units.map { "unknown units '\($0)'" } ?? "no units and the site's units are not known"
                dropped.append("glucose \(glucose) of \(treatment.common.primaryKey ?? "a treatment") has \(why): no BG check made from it")
            }
        }
        if let rate = treatment.rate ?? treatment.absolute, type == .tempBasal || treatment.rate != nil {
            add(.basal, rate, treatment.duration ?? 0)
        }
        switch type {
        case .siteChange?: add(.siteChange)
        case .sensorStart?: add(.sensorStart)
        case .pumpBatteryChange?: add(.pumpBatteryChange)
        default: break
        }
        return out
    }

    /// The upload form of this component alone (seed 001 `dictionaryRepresentationForNightscoutUpload`):
    /// `enteredBy` (default `defaultEnteredBy`), `eventTime`, `_id` = `baseID`, the kind's fields
    /// and `eventType` (the original one when downloaded).
    public func uploadTreatment(defaultEnteredBy: String = "Lookout") -> Treatment {
        TreatmentComponent.merge([self], defaultEnteredBy: defaultEnteredBy).first!
    }

    /// Merges components back into treatments, one per `baseID` (order of first appearance).
    /// The event type is the original one if any component has it; otherwise insulin + carbs is
    /// `Meal Bolus` and a single component uses its kind's upload type. The time is the earliest.
    public static func merge(_ components: [TreatmentComponent], defaultEnteredBy: String = "Lookout") -> [Treatment] {
        var order: [String] = []
        var groups: [String: [TreatmentComponent]] = [:]
        for c in components {
            if groups[c.baseID] == nil { order.append(c.baseID) }
            groups[c.baseID, default: []].append(c)
        }
        return order.map { base in
            let parts = groups[base]!
            let time = parts.map(\.date).min()!
            var t = Treatment(common: CommonFields(id: base.isEmpty ? nil : base))
            t.enteredBy = parts.compactMap(\.enteredBy).first ?? defaultEnteredBy
            t.eventTime = NightscoutDate(time, asISOString: true)
            let kinds = Set(parts.map(\.kind))
            for p in parts {
                switch p.kind {
                case .insulin: t.insulin = p.value
                case .carbs: t.carbs = p.value
                case .exercise: t.duration = p.value
                case .bgCheck:
                    t.glucose = p.value; t.glucoseType = "Finger"; t.units = GlucoseUnit.milligramsPerDeciliter.rawValue
                case .basal: t.rate = p.value; t.duration = p.secondaryValue
                case .siteChange, .sensorStart, .pumpBatteryChange: break
                }
            }
            if let original = parts.compactMap(\.nightscoutEventType).first {
                t.eventType = original
            } else if kinds == [.insulin, .carbs] {
                t.eventType = .mealBolus
            } else {
                t.eventType = parts[0].kind.uploadEventType
            }
            return t
        }
    }
}
