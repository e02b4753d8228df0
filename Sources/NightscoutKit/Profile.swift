import Foundation
import LookoutWire

/// One step of a profile schedule: the value in force from `time` (local wall clock) onwards.
public struct ScheduleItem: Sendable, Equatable, Codable {
    /// `time`, `"HH:mm"` local wall-clock time.
    public var time: String?
    /// `value` (U/h, g/U, mg/dL/U or mmol/L/U, or a glucose target, per schedule).
    public var value: Double
    /// `timeAsSeconds`, seconds after local midnight.
    public var timeAsSeconds: Int?
    /// Fields the model does not know, kept verbatim.
    public var extra: [String: JSONValue]

    /// Creates an item; `time` is derived from `seconds` (`HH:mm`).
    public init(seconds: Int, value: Double) {
        self.timeAsSeconds = seconds
        self.value = value
        let h = seconds / 3600, m = seconds / 60 % 60
        self.time = (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
        self.extra = [:]
    }

    /// The start in seconds after local midnight: `timeAsSeconds`, else parsed from `time`.
    public var startSeconds: Int? {
        if let timeAsSeconds { return timeAsSeconds }
        guard let time else { return nil }
        let parts = time.split(separator: ":")
        // Bounded so that a hostile `time` ("99999999999999999:00") cannot overflow the sum.
        guard parts.count >= 2, let h = Int(parts[0]), let m = Int(parts[1]), (0...48).contains(h), (0...5999).contains(m)
        else { return nil }
        let s = parts.count > 2 ? Int(parts[2]) ?? 0 : 0
        guard (0...359_999).contains(s) else { return nil }
        return h * 3600 + m * 60 + s
    }

    /// Decodes leniently (numbers may be strings); unknown fields go to `extra`.
    public init(from decoder: any Decoder) throws {
        var r = try DocumentReader(decoder)
        time = try r.string("time")
        guard let v = try r.double("value") else {
            throw DecodingError.keyNotFound(AnyCodingKey("value"), .init(codingPath: decoder.codingPath, debugDescription: "schedule item without value"))
        }
        value = v
        timeAsSeconds = try r.int("timeAsSeconds")
        extra = try r.extras()
    }

    /// Encodes, re-emitting `extra`.
    public func encode(to encoder: any Encoder) throws {
        var w = DocumentWriter(encoder)
        try w.put("time", time)
        try w.number("value", value)
        try w.put("timeAsSeconds", timeAsSeconds)
        try w.finish(extra: extra)
    }
}

/// A named profile inside a profile set's `store`: therapy schedules and settings.
public struct Profile: Sendable, Equatable, Codable {
    /// `dia`, insulin action duration in hours.
    public var dia: Double?
    /// `timezone` (IANA name; case may differ, e.g. `ETC/GMT+5`).
    public var timezone: String?
    /// `units` of `sens` and targets.
    public var units: String?
    /// `basal`, U/h.
    public var basal: [ScheduleItem]
    /// `carbratio`, g/U.
    public var carbratio: [ScheduleItem]
    /// `sens`, insulin sensitivity (units per U).
    public var sens: [ScheduleItem]
    /// `target_low`.
    public var targetLow: [ScheduleItem]
    /// `target_high`.
    public var targetHigh: [ScheduleItem]
    /// Fields the model does not know (`carbs_hr`, `delay`, …), kept verbatim.
    public var extra: [String: JSONValue]

    /// Creates a profile.
    public init(dia: Double? = nil, timezone: String? = nil, units: String? = nil, basal: [ScheduleItem] = [],
                carbratio: [ScheduleItem] = [], sens: [ScheduleItem] = [], targetLow: [ScheduleItem] = [],
                targetHigh: [ScheduleItem] = [], extra: [String: JSONValue] = [:]) {
        self.dia = dia; self.timezone = timezone; self.units = units; self.basal = basal
        self.carbratio = carbratio; self.sens = sens; self.targetLow = targetLow
        self.targetHigh = targetHigh; self.extra = extra
    }

    /// Decodes; missing schedules are empty; unknown fields go to `extra`.
    public init(from decoder: any Decoder) throws {
        var r = try DocumentReader(decoder)
        dia = try r.double("dia")
        timezone = try r.string("timezone")
        units = try r.string("units")
        basal = try r.value("basal") ?? []
        carbratio = try r.value("carbratio") ?? []
        sens = try r.value("sens") ?? []
        targetLow = try r.value("target_low") ?? []
        targetHigh = try r.value("target_high") ?? []
        extra = try r.extras()
    }

    /// Encodes, re-emitting `extra`.
    public func encode(to encoder: any Encoder) throws {
        var w = DocumentWriter(encoder)
        try w.number("dia", dia)
        try w.put("timezone", timezone)
        try w.put("units", units)
        try w.put("basal", basal)
        try w.put("carbratio", carbratio)
        try w.put("sens", sens)
        try w.put("target_low", targetLow)
        try w.put("target_high", targetHigh)
        try w.finish(extra: extra)
    }
}

/// A `profile` document: a set of named profiles (`store`) with a default (spec §2.5).
@dynamicMemberLookup
public struct ProfileSet: NightscoutDocument {
    /// Common fields.
    public var common: CommonFields
    /// `defaultProfile`, the name of the profile in use.
    public var defaultProfile: String?
    /// `startDate` (ISO), from when the set applies.
    public var startDate: NightscoutDate?
    /// `units`.
    public var units: String?
    /// `enteredBy`.
    public var enteredBy: String?
    /// `store`: named profiles.
    public var store: [String: Profile]
    /// `loopSettings` (Loop; holds the APNs `deviceToken` and `bundleIdentifier`).
    public var loopSettings: JSONValue?
    /// Fields the model does not know (`mills`, `isAPNSProduction`, …), kept verbatim.
    public var extra: [String: JSONValue]

    /// Creates a profile set.
    public init(common: CommonFields = CommonFields(), defaultProfile: String? = nil, startDate: NightscoutDate? = nil,
                units: String? = nil, enteredBy: String? = nil, store: [String: Profile] = [:],
                loopSettings: JSONValue? = nil, extra: [String: JSONValue] = [:]) {
        self.common = common; self.defaultProfile = defaultProfile; self.startDate = startDate
        self.units = units; self.enteredBy = enteredBy; self.store = store
        self.loopSettings = loopSettings; self.extra = extra
    }

    /// The default profile, or the first one by name when `defaultProfile` is missing or unknown
    /// (xDrip4iOS behaviour).
    public var activeProfile: Profile? {
        if let name = defaultProfile, let p = store[name] { return p }
        return store.keys.sorted().first.flatMap { store[$0] }
    }

    /// Decodes; unknown fields go to `extra`.
    public init(from decoder: any Decoder) throws {
        var r = try DocumentReader(decoder)
        common = try CommonFields(reading: &r)
        defaultProfile = try r.string("defaultProfile")
        startDate = try r.value("startDate")
        units = try r.string("units")
        enteredBy = try r.string("enteredBy")
        store = try r.value("store") ?? [:]
        loopSettings = try r.value("loopSettings")
        extra = try r.extras()
    }

    /// Encodes, re-emitting `extra`.
    public func encode(to encoder: any Encoder) throws {
        var w = DocumentWriter(encoder)
        try common.write(to: &w)
        try w.put("defaultProfile", defaultProfile)
        try w.put("startDate", startDate)
        try w.put("units", units)
        try w.put("enteredBy", enteredBy)
        try w.put("store", store)
        try w.put("loopSettings", loopSettings)
        try w.finish(extra: extra)
    }
}
