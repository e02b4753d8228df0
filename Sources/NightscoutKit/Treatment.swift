import Foundation
import LookoutWire

/// A `treatments` document (spec §4.3): boluses, carbs, temp basals, overrides, notes, … The time
/// is `created_at` (v1) and/or `date` (v3) in `common`. Fields not modelled here are kept in
/// `extra` and re-emitted on encoding.
@dynamicMemberLookup
public struct Treatment: NightscoutDocument {
    /// Common fields (`created_at` is the v1 event time).
    public var common: CommonFields
    /// `eventType`; unknown types are kept as-is.
    public var eventType: EventType?
    /// `glucose` (in `units`).
    public var glucose: Double?
    /// `glucoseType` (`Finger`, `Sensor`, `Manual`, `Meter`).
    public var glucoseType: String?
    /// `units` of `glucose` / targets.
    public var units: String?
    /// `carbs`, grams (v1 reads return `null` when absent).
    public var carbs: Double?
    /// `protein`, grams.
    public var protein: Double?
    /// `fat`, grams.
    public var fat: Double?
    /// `insulin`, units.
    public var insulin: Double?
    /// `duration`, minutes.
    public var duration: Double?
    /// `durationInMilliseconds`.
    public var durationInMilliseconds: Double?
    /// `endmills`, epoch ms.
    public var endmills: Double?
    /// `preBolus`, minutes.
    public var preBolus: Double?
    /// `splitNow`, percent (combo bolus).
    public var splitNow: Double?
    /// `splitExt`, percent (combo bolus).
    public var splitExt: Double?
    /// `percent` (temp basal / profile switch).
    public var percent: Double?
    /// `absolute` temp basal rate, U/h.
    public var absolute: Double?
    /// `rate`, U/h.
    public var rate: Double?
    /// `targetTop` (temporary target).
    public var targetTop: Double?
    /// `targetBottom` (temporary target).
    public var targetBottom: Double?
    /// `profile` name (profile switch).
    public var profile: String?
    /// `reason` (temporary target / override).
    public var reason: String?
    /// `notes`.
    public var notes: String?
    /// `enteredBy`.
    public var enteredBy: String?
    /// `timestamp` (Loop: ISO without ms).
    public var timestamp: NightscoutDate?
    /// `eventTime` (upload only: the server moves it to `created_at`).
    public var eventTime: NightscoutDate?
    /// `syncIdentifier` (Loop).
    public var syncIdentifier: String?
    /// `insulinType` (Loop).
    public var insulinType: String?
    /// `absorptionTime`, minutes (Loop).
    public var absorptionTime: Double?
    /// `foodType` (Loop).
    public var foodType: String?
    /// `automatic` (Loop).
    public var automatic: Bool?
    /// `pumpId` (AAPS; number or string, kept exactly).
    public var pumpId: JSONValue?
    /// `pumpType` (AAPS).
    public var pumpType: String?
    /// `pumpSerial` (AAPS).
    public var pumpSerial: String?
    /// `isSMB` (AAPS).
    public var isSMB: Bool?
    /// Fields the model does not know, kept verbatim.
    public var extra: [String: JSONValue]

    /// Creates a treatment.
    public init(common: CommonFields = CommonFields(), eventType: EventType? = nil, glucose: Double? = nil, glucoseType: String? = nil, units: String? = nil, carbs: Double? = nil, protein: Double? = nil, fat: Double? = nil, insulin: Double? = nil, duration: Double? = nil, durationInMilliseconds: Double? = nil, endmills: Double? = nil, preBolus: Double? = nil, splitNow: Double? = nil, splitExt: Double? = nil, percent: Double? = nil, absolute: Double? = nil, rate: Double? = nil, targetTop: Double? = nil, targetBottom: Double? = nil, profile: String? = nil, reason: String? = nil, notes: String? = nil, enteredBy: String? = nil, timestamp: NightscoutDate? = nil, eventTime: NightscoutDate? = nil, syncIdentifier: String? = nil, insulinType: String? = nil, absorptionTime: Double? = nil, foodType: String? = nil, automatic: Bool? = nil, pumpId: JSONValue? = nil, pumpType: String? = nil, pumpSerial: String? = nil, isSMB: Bool? = nil, extra: [String: JSONValue] = [:]) {
        self.common = common
        self.eventType = eventType
        self.glucose = glucose
        self.glucoseType = glucoseType
        self.units = units
        self.carbs = carbs
        self.protein = protein
        self.fat = fat
        self.insulin = insulin
        self.duration = duration
        self.durationInMilliseconds = durationInMilliseconds
        self.endmills = endmills
        self.preBolus = preBolus
        self.splitNow = splitNow
        self.splitExt = splitExt
        self.percent = percent
        self.absolute = absolute
        self.rate = rate
        self.targetTop = targetTop
        self.targetBottom = targetBottom
        self.profile = profile
        self.reason = reason
        self.notes = notes
        self.enteredBy = enteredBy
        self.timestamp = timestamp
        self.eventTime = eventTime
        self.syncIdentifier = syncIdentifier
        self.insulinType = insulinType
        self.absorptionTime = absorptionTime
        self.foodType = foodType
        self.automatic = automatic
        self.pumpId = pumpId
        self.pumpType = pumpType
        self.pumpSerial = pumpSerial
        self.isSMB = isSMB
        self.extra = extra
    }

    /// The event time: `created_at`, else `date`, else `eventTime`, else `timestamp`.
    public var time: NightscoutDate? { common.createdAt ?? common.date ?? eventTime ?? timestamp }

    /// Decodes a treatment; unknown fields go to `extra`.
    public init(from decoder: any Decoder) throws {
        var r = try DocumentReader(decoder)
        common = try CommonFields(reading: &r)
        eventType = try r.string("eventType").map(EventType.init(rawValue:))
        glucose = try r.double("glucose")
        glucoseType = try r.string("glucoseType")
        units = try r.string("units")
        carbs = try r.double("carbs")
        protein = try r.double("protein")
        fat = try r.double("fat")
        insulin = try r.double("insulin")
        duration = try r.double("duration")
        durationInMilliseconds = try r.double("durationInMilliseconds")
        endmills = try r.double("endmills")
        preBolus = try r.double("preBolus")
        splitNow = try r.double("splitNow")
        splitExt = try r.double("splitExt")
        percent = try r.double("percent")
        absolute = try r.double("absolute")
        rate = try r.double("rate")
        targetTop = try r.double("targetTop")
        targetBottom = try r.double("targetBottom")
        profile = try r.string("profile")
        reason = try r.string("reason")
        notes = try r.string("notes")
        enteredBy = try r.string("enteredBy")
        timestamp = try r.value("timestamp")
        eventTime = try r.value("eventTime")
        syncIdentifier = try r.string("syncIdentifier")
        insulinType = try r.string("insulinType")
        absorptionTime = try r.double("absorptionTime")
        foodType = try r.string("foodType")
        automatic = try r.bool("automatic")
        pumpId = try r.value("pumpId")
        pumpType = try r.string("pumpType")
        pumpSerial = try r.string("pumpSerial")
        isSMB = try r.bool("isSMB")
        extra = try r.extras()
    }

    /// Encodes the treatment, re-emitting `extra`.
    public func encode(to encoder: any Encoder) throws {
        var w = DocumentWriter(encoder)
        try common.write(to: &w)
        try w.put("eventType", eventType)
        try w.number("glucose", glucose)
        try w.put("glucoseType", glucoseType)
        try w.put("units", units)
        try w.number("carbs", carbs)
        try w.number("protein", protein)
        try w.number("fat", fat)
        try w.number("insulin", insulin)
        try w.number("duration", duration)
        try w.number("durationInMilliseconds", durationInMilliseconds)
        try w.number("endmills", endmills)
        try w.number("preBolus", preBolus)
        try w.number("splitNow", splitNow)
        try w.number("splitExt", splitExt)
        try w.number("percent", percent)
        try w.number("absolute", absolute)
        try w.number("rate", rate)
        try w.number("targetTop", targetTop)
        try w.number("targetBottom", targetBottom)
        try w.put("profile", profile)
        try w.put("reason", reason)
        try w.put("notes", notes)
        try w.put("enteredBy", enteredBy)
        try w.put("timestamp", timestamp)
        try w.put("eventTime", eventTime)
        try w.put("syncIdentifier", syncIdentifier)
        try w.put("insulinType", insulinType)
        try w.number("absorptionTime", absorptionTime)
        try w.put("foodType", foodType)
        try w.put("automatic", automatic)
        try w.put("pumpId", pumpId)
        try w.put("pumpType", pumpType)
        try w.put("pumpSerial", pumpSerial)
        try w.put("isSMB", isSMB)
        try w.finish(extra: extra)
    }
}
