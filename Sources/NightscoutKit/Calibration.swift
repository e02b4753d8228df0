import Foundation

/// A sensor calibration as a CGM app holds it (xDrip4iOS `Calibration`), and its Nightscout
/// upload as two entries: a `cal` record and an `mbg` record (seed 001).
public struct Calibration: Sendable, Equatable {
    /// Local id; becomes the `cal` record's `_id`.
    public var id: String
    /// Id of the `mbg` record (a different id, seed 001).
    public var meterRecordID: String
    /// Transmitter / device name.
    public var device: String?
    /// Calibration time.
    public var timestamp: Date
    /// The meter value, mg/dL.
    public var bg: Double
    /// The app's local slope.
    public var slope: Double
    /// The app's local intercept.
    public var intercept: Double

    /// Creates a calibration.
    public init(id: String, meterRecordID: String, device: String?, timestamp: Date, bg: Double, slope: Double, intercept: Double) {
        self.id = id; self.meterRecordID = meterRecordID; self.device = device; self.timestamp = timestamp
        self.bg = bg; self.slope = slope; self.intercept = intercept
    }

    /// Nightscout's slope: `1000 / slope` (0 when the local slope is 0).
    public var nightscoutSlope: Double { slope != 0 ? 1000 / slope : 0 }

    /// Nightscout's intercept: `-(intercept × 1000) / slope` (0 when the local slope is 0).
    public var nightscoutIntercept: Double { slope != 0 ? -(intercept * 1000) / slope : 0 }

    /// The `cal` entry: `_id`, `device`, `date`, `dateString`, `type: cal`, `sysTime`,
    /// transformed `slope`/`intercept`, `scale: 1`.
    public var calEntry: Entry {
        let time = NightscoutDate(timestamp)
        return Entry(common: CommonFields(id: id, date: time, device: device ?? ""), type: .cal,
                     dateString: time.asISOString, sysTime: time.asISOString,
                     slope: nightscoutSlope, intercept: nightscoutIntercept, scale: 1)
    }

    /// The `mbg` entry: `_id` (= `meterRecordID`), `device`, `date`, `dateString`, `type: mbg`,
    /// `mbg`, `sysTime`.
    public var mbgEntry: Entry {
        let time = NightscoutDate(timestamp)
        return Entry(common: CommonFields(id: meterRecordID, date: time, device: device ?? ""), type: .mbg,
                     mbg: bg, dateString: time.asISOString, sysTime: time.asISOString)
    }

    /// Both upload records, `cal` first.
    public var uploadEntries: [Entry] { [calEntry, mbgEntry] }
}
