import Foundation
import LookoutWire

/// The `type` of an entry (`sgv`, `mbg`, `cal`, or any other string, kept as-is).
public struct EntryType: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The wire text.
    public var rawValue: String
    /// Creates a type from its wire text.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Sensor glucose value.
    public static let sgv = EntryType(rawValue: "sgv")
    /// Meter (manual) blood glucose.
    public static let mbg = EntryType(rawValue: "mbg")
    /// Calibration record.
    public static let cal = EntryType(rawValue: "cal")
    /// The wire text.
    public var description: String { rawValue }
    /// Decodes the wire text.
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    /// Encodes the wire text.
    public func encode(to encoder: any Encoder) throws { var c = encoder.singleValueContainer(); try c.encode(rawValue) }
}

/// An `entries` document: a sensor glucose value (`sgv`), a meter value (`mbg`) or a
/// calibration (`cal`), spec §4.2.
@dynamicMemberLookup
public struct Entry: NightscoutDocument {
    /// Common fields (`date` is the entry's time, epoch ms).
    public var common: CommonFields
    /// `type`.
    public var type: EntryType?
    /// `sgv`, mg/dL (v1 may hold strings; read leniently).
    public var sgv: Double?
    /// `mbg`, mg/dL.
    public var mbg: Double?
    /// `direction` (trend arrow name).
    public var direction: TrendDirection?
    /// `trend` (1–9; sometimes a string on the wire).
    public var trend: Int?
    /// `noise`.
    public var noise: Int?
    /// `filtered` raw value.
    public var filtered: Double?
    /// `unfiltered` raw value.
    public var unfiltered: Double?
    /// `rssi`.
    public var rssi: Int?
    /// `delta` (mg/dL since the previous reading).
    public var delta: Double?
    /// `units`.
    public var units: String?
    /// `dateString` (ISO; v1 rewrites it to UTC).
    public var dateString: NightscoutDate?
    /// `sysTime` (ISO).
    public var sysTime: NightscoutDate?
    /// `slope` of a `cal` record.
    public var slope: Double?
    /// `intercept` of a `cal` record.
    public var intercept: Double?
    /// `scale` of a `cal` record.
    public var scale: Double?
    /// Fields the model does not know, kept verbatim.
    public var extra: [String: JSONValue]

    /// Creates an entry.
    public init(common: CommonFields = CommonFields(), type: EntryType? = nil, sgv: Double? = nil, mbg: Double? = nil,
                direction: TrendDirection? = nil, trend: Int? = nil, noise: Int? = nil, filtered: Double? = nil,
                unfiltered: Double? = nil, rssi: Int? = nil, delta: Double? = nil, units: String? = nil,
                dateString: NightscoutDate? = nil, sysTime: NightscoutDate? = nil, slope: Double? = nil,
                intercept: Double? = nil, scale: Double? = nil, extra: [String: JSONValue] = [:]) {
        self.common = common; self.type = type; self.sgv = sgv; self.mbg = mbg; self.direction = direction
        self.trend = trend; self.noise = noise; self.filtered = filtered; self.unfiltered = unfiltered
        self.rssi = rssi; self.delta = delta; self.units = units; self.dateString = dateString
        self.sysTime = sysTime; self.slope = slope; self.intercept = intercept; self.scale = scale; self.extra = extra
    }

    /// The reading's time: `date`, else `dateString`, else `sysTime`.
    public var time: NightscoutDate? { common.date ?? dateString ?? sysTime ?? common.createdAt }

    /// Decodes an entry; unknown fields go to `extra`.
    public init(from decoder: any Decoder) throws {
        var r = try DocumentReader(decoder)
        common = try CommonFields(reading: &r)
        type = try r.string("type").map(EntryType.init(rawValue:))
        sgv = try r.double("sgv")
        mbg = try r.double("mbg")
        direction = try r.string("direction").map(TrendDirection.init(rawValue:))
        trend = try r.int("trend")
        noise = try r.int("noise")
        filtered = try r.double("filtered")
        unfiltered = try r.double("unfiltered")
        rssi = try r.int("rssi")
        delta = try r.double("delta")
        units = try r.string("units")
        dateString = try r.value("dateString")
        sysTime = try r.value("sysTime")
        slope = try r.double("slope")
        intercept = try r.double("intercept")
        scale = try r.double("scale")
        extra = try r.extras()
    }

    /// Encodes the entry, re-emitting `extra`.
    public func encode(to encoder: any Encoder) throws {
        var w = DocumentWriter(encoder)
        try common.write(to: &w)
        try w.put("type", type)
        try w.number("sgv", sgv)
        try w.number("mbg", mbg)
        try w.put("direction", direction)
        try w.put("trend", trend)
        try w.put("noise", noise)
        try w.number("filtered", filtered)
        try w.number("unfiltered", unfiltered)
        try w.put("rssi", rssi)
        try w.number("delta", delta)
        try w.put("units", units)
        try w.put("dateString", dateString)
        try w.put("sysTime", sysTime)
        try w.number("slope", slope)
        try w.number("intercept", intercept)
        try w.number("scale", scale)
        try w.finish(extra: extra)
    }
}
