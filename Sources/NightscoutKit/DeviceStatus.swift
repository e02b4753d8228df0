import Foundation
import LookoutWire

/// The `uploader` sub-object of a device status: the phone or transmitter that uploads.
public struct UploaderStatus: Sendable, Equatable, Codable {
    /// `name` (e.g. `transmitter`).
    public var name: String?
    /// `battery`, percent.
    public var battery: Double?
    /// `batteryVoltage`, volts (Dexcom transmitters).
    public var batteryVoltage: Double?
    /// `isCharging`.
    public var isCharging: Bool?
    /// `timestamp`.
    public var timestamp: NightscoutDate?
    /// Fields the model does not know, kept verbatim.
    public var extra: [String: JSONValue]

    /// Creates an uploader status.
    public init(name: String? = nil, battery: Double? = nil, batteryVoltage: Double? = nil, isCharging: Bool? = nil,
                timestamp: NightscoutDate? = nil, extra: [String: JSONValue] = [:]) {
        self.name = name; self.battery = battery; self.batteryVoltage = batteryVoltage
        self.isCharging = isCharging; self.timestamp = timestamp; self.extra = extra
    }

    /// Decodes; unknown fields go to `extra`.
    public init(from decoder: any Decoder) throws {
        var r = try DocumentReader(decoder)
        name = try r.string("name")
        battery = try r.double("battery")
        batteryVoltage = try r.double("batteryVoltage")
        isCharging = try r.bool("isCharging")
        timestamp = try r.value("timestamp")
        extra = try r.extras()
    }

    /// Encodes, re-emitting `extra`.
    public func encode(to encoder: any Encoder) throws {
        var w = DocumentWriter(encoder)
        try w.put("name", name)
        try w.number("battery", battery)
        try w.number("batteryVoltage", batteryVoltage)
        try w.put("isCharging", isCharging)
        try w.put("timestamp", timestamp)
        try w.finish(extra: extra)
    }
}

/// A `devicestatus` document (spec §2.4, §4.4). The per-uploader sub-objects (`loop`, `openaps`,
/// `pump`, `override`, `xdripjs`, `radioAdapter`) are free-form and kept as JSON; `uploader` is
/// typed. Unknown top-level fields go to `extra`.
@dynamicMemberLookup
public struct DeviceStatus: NightscoutDocument {
    /// Common fields (`device` + `created_at` identify a status).
    public var common: CommonFields
    /// `uploader`.
    public var uploader: UploaderStatus?
    /// `pump`.
    public var pump: JSONValue?
    /// `loop` (Loop).
    public var loop: JSONValue?
    /// `openaps` (oref0 / AAPS).
    public var openaps: JSONValue?
    /// `override` (Loop).
    public var override: JSONValue?
    /// Fields the model does not know, kept verbatim.
    public var extra: [String: JSONValue]

    /// Creates a device status.
    public init(common: CommonFields = CommonFields(), uploader: UploaderStatus? = nil, pump: JSONValue? = nil,
                loop: JSONValue? = nil, openaps: JSONValue? = nil, override: JSONValue? = nil,
                extra: [String: JSONValue] = [:]) {
        self.common = common; self.uploader = uploader; self.pump = pump; self.loop = loop
        self.openaps = openaps; self.override = override; self.extra = extra
    }

    /// Decodes; unknown fields go to `extra`.
    public init(from decoder: any Decoder) throws {
        var r = try DocumentReader(decoder)
        common = try CommonFields(reading: &r)
        uploader = try r.value("uploader")
        pump = try r.value("pump")
        loop = try r.value("loop")
        openaps = try r.value("openaps")
        override = try r.value("override")
        extra = try r.extras()
    }

    /// Encodes, re-emitting `extra`.
    public func encode(to encoder: any Encoder) throws {
        var w = DocumentWriter(encoder)
        try common.write(to: &w)
        try w.put("uploader", uploader)
        try w.put("pump", pump)
        try w.put("loop", loop)
        try w.put("openaps", openaps)
        try w.put("override", override)
        try w.finish(extra: extra)
    }
}
