import Foundation

extension Entry {
    /// An `sgv` entry in xDrip4iOS's upload format (seed 001 `BgReading+Nightscout`):
    /// `_id`, `device` (empty when unknown), `date` (ms), `dateString` and `sysTime` (UTC ISO),
    /// `type: sgv`, `sgv` rounded to an integer, `direction` from the slope, `filtered` and
    /// `unfiltered` = raw × 1000 (the calculated value × 1000 when there is no raw value),
    /// `noise: 1`.
    /// - Parameters:
    ///   - slopeMgdlPerMinute: the reading's slope; `nil` gives `NOT COMPUTABLE`.
    public static func bgReadingUpload(id: String, device: String?, timestamp: Date, calculatedValue: Double,
                                       rawValue: Double?, slopeMgdlPerMinute: Double?) -> Entry {
        let time = NightscoutDate(timestamp)
        let iso = time.asISOString
        let raw = (rawValue ?? calculatedValue) * 1000
        return Entry(
            common: CommonFields(id: id, date: time, device: device ?? ""),
            type: .sgv,
            sgv: calculatedValue.rounded(),
            direction: slopeMgdlPerMinute.map { TrendDirection(slopeMgdlPerMinute: $0) } ?? .notComputable,
            noise: 1, filtered: raw, unfiltered: raw,
            dateString: iso, sysTime: iso)
    }
}
