import Foundation
import LookoutWire

extension DeviceStatus {
    /// The uploader battery status xDrip4iOS posts (seed 001): `uploader.name = "transmitter"`
    /// and `uploader.battery`. For transmitters reporting a voltage (Dexcom), `battery` is the
    /// phone's level and the voltage is added under its own key (`batteryKey`, e.g.
    /// `batteryVoltage`). `created_at` is `date` as UTC ISO when given.
    public static func uploaderBattery(battery: Int, name: String = "transmitter", transmitterKey: String? = nil,
                                       transmitterValue: JSONValue? = nil, device: String? = nil,
                                       date: Date? = nil) -> DeviceStatus {
        var uploader = UploaderStatus(name: name, battery: Double(battery))
        if let key = transmitterKey, let value = transmitterValue, key != "battery" {
            if key == "batteryVoltage", let v = value.lenientDoubleValue {
                uploader.batteryVoltage = v
            } else {
                uploader.extra[key] = value
            }
        }
        return DeviceStatus(common: CommonFields(createdAt: date.map { NightscoutDate($0, asISOString: true) }, device: device),
                            uploader: uploader)
    }
}

extension Treatment {
    /// The `Sensor Start` treatment xDrip4iOS posts (seed 001): `_id` = sensor id,
    /// `eventType: Sensor Start`, `created_at` (UTC ISO), `enteredBy`.
    public static func sensorStart(sensorID: String, startDate: Date, enteredBy: String = "Lookout") -> Treatment {
        Treatment(common: CommonFields(id: sensorID, createdAt: NightscoutDate(startDate, asISOString: true)),
                  eventType: .sensorStart, enteredBy: enteredBy)
    }
}
