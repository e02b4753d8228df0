import Foundation
import XCTest
@testable import NightscoutKit

final class TrendTests: XCTestCase {
    func testSlopeThresholdsAtBoundaries() {
        let table: [(Double, TrendDirection)] = [
            (10, .doubleUp), (3.5001, .doubleUp), (3.5, .singleUp),
            (2.0001, .singleUp), (2.0, .fortyFiveUp),
            (1.0001, .fortyFiveUp), (1.0, .flat),
            (0, .flat), (-0.9999, .flat), (-1.0, .fortyFiveDown),
            (-1.9999, .fortyFiveDown), (-2.0, .singleDown),
            (-3.4999, .singleDown), (-3.5, .doubleDown), (-10, .doubleDown),
            (.nan, .notComputable), (.infinity, .notComputable),
        ]
        for (slope, expected) in table {
            XCTAssertEqual(TrendDirection(slopeMgdlPerMinute: slope), expected, "slope \(slope)")
        }
    }

    func testTrendNumbers() {
        let table: [(TrendDirection, Int)] = [
            (.none, 0), (.doubleUp, 1), (.singleUp, 2), (.fortyFiveUp, 3), (.flat, 4), (.fortyFiveDown, 5),
            (.singleDown, 6), (.doubleDown, 7), (.notComputable, 8), (.rateOutOfRange, 9),
            (TrendDirection(rawValue: "NotComputable"), 8), (TrendDirection(rawValue: "RateOutOfRange"), 9),
        ]
        for (d, n) in table {
            XCTAssertEqual(d.trendNumber, n, d.rawValue)
            if d.rawValue != "NotComputable", d.rawValue != "RateOutOfRange" {
                XCTAssertEqual(TrendDirection(trendNumber: n), d)
            }
        }
        XCTAssertNil(TrendDirection(rawValue: "Sideways").trendNumber)
        XCTAssertNil(TrendDirection(trendNumber: 10))
    }
}

final class UploadFormatTests: XCTestCase {
    let when = Date(timeIntervalSince1970: 1_714_557_600.123)

    func testBgReadingUpload() throws {
        let e = Entry.bgReadingUpload(id: "1A2B", device: "Dexcom G6", timestamp: when, calculatedValue: 123.6,
                                      rawValue: 150.25, slopeMgdlPerMinute: 1.5)
        let tree = try jsonTree(e)
        XCTAssertEqual(tree, try jsonTree("""
        {"_id":"1A2B","device":"Dexcom G6","date":1714557600123,"dateString":"2024-05-01T10:00:00.123Z",
         "type":"sgv","sgv":124,"direction":"FortyFiveUp","filtered":150250,"unfiltered":150250,"noise":1,
         "sysTime":"2024-05-01T10:00:00.123Z"}
        """))
        let noRaw = Entry.bgReadingUpload(id: "x", device: nil, timestamp: when, calculatedValue: 100, rawValue: nil,
                                          slopeMgdlPerMinute: nil)
        XCTAssertEqual(noRaw.filtered, 100_000)
        XCTAssertEqual(noRaw.unfiltered, 100_000)
        XCTAssertEqual(noRaw.device, "")
        XCTAssertEqual(noRaw.direction, .notComputable)
    }

    func testCalibrationUpload() throws {
        let c = Calibration(id: "cal-1", meterRecordID: "mbg-1", device: "G6", timestamp: when, bg: 110, slope: 0.8, intercept: 20)
        XCTAssertEqual(c.nightscoutSlope, 1250, accuracy: 1e-9)
        XCTAssertEqual(c.nightscoutIntercept, -25000, accuracy: 1e-9)
        XCTAssertEqual(try jsonTree(c.calEntry), try jsonTree("""
        {"_id":"cal-1","device":"G6","date":1714557600123,"dateString":"2024-05-01T10:00:00.123Z","type":"cal",
         "sysTime":"2024-05-01T10:00:00.123Z","slope":1250,"intercept":-25000,"scale":1}
        """))
        XCTAssertEqual(try jsonTree(c.mbgEntry), try jsonTree("""
        {"_id":"mbg-1","device":"G6","date":1714557600123,"dateString":"2024-05-01T10:00:00.123Z","type":"mbg",
         "mbg":110,"sysTime":"2024-05-01T10:00:00.123Z"}
        """))
        XCTAssertEqual(c.uploadEntries.map(\.type), [.cal, .mbg])
        let zero = Calibration(id: "a", meterRecordID: "b", device: nil, timestamp: when, bg: 100, slope: 0, intercept: 5)
        XCTAssertEqual(zero.nightscoutSlope, 0)
        XCTAssertEqual(zero.nightscoutIntercept, 0)
    }

    func testUploaderBattery() throws {
        let s = DeviceStatus.uploaderBattery(battery: 85)
        XCTAssertEqual(try jsonTree(s), try jsonTree(#"{"uploader":{"name":"transmitter","battery":85}}"#))
        let dexcom = DeviceStatus.uploaderBattery(battery: 64, transmitterKey: "batteryVoltage", transmitterValue: .double(3.01))
        XCTAssertEqual(try jsonTree(dexcom), try jsonTree(#"{"uploader":{"name":"transmitter","battery":64,"batteryVoltage":3.01}}"#))
        let other = DeviceStatus.uploaderBattery(battery: 50, transmitterKey: "voltageA", transmitterValue: .int(300))
        XCTAssertEqual(try jsonTree(other)["uploader"]?["voltageA"], .int(300))
    }

    func testSensorStart() throws {
        let t = Treatment.sensorStart(sensorID: "sensor-9", startDate: when, enteredBy: "xDrip4iOS")
        XCTAssertEqual(try jsonTree(t), try jsonTree("""
        {"_id":"sensor-9","eventType":"Sensor Start","created_at":"2024-05-01T10:00:00.123Z","enteredBy":"xDrip4iOS"}
        """))
    }
}

final class GlucoseUnitTests: XCTestCase {
    func testConversionUsesSeedFactor() {
        XCTAssertEqual(GlucoseUnit.mgdl(fromMmol: 5.55), 100, accuracy: 1e-9)
        XCTAssertEqual(GlucoseUnit.mgdl(fromMmol: 10), 180.1801801801802, accuracy: 1e-9)
        XCTAssertEqual(GlucoseUnit.mmol(fromMgdl: 180), 9.99, accuracy: 1e-9)
        XCTAssertEqual(GlucoseUnit.millimolesPerLiter.convert(5.55, to: .milligramsPerDeciliter), 100, accuracy: 1e-9)
        XCTAssertEqual(GlucoseUnit.milligramsPerDeciliter.convert(100, to: .milligramsPerDeciliter), 100)
        for v in [2.2, 5.5, 12.3] {
            XCTAssertEqual(GlucoseUnit.mmol(fromMgdl: GlucoseUnit.mgdl(fromMmol: v)), v, accuracy: 1e-9)
        }
    }

    func testWireSpellings() {
        let table: [(String, GlucoseUnit?)] = [("mg/dl", .milligramsPerDeciliter), ("mg/dL", .milligramsPerDeciliter),
                                               ("mmol", .millimolesPerLiter), ("mmol/L", .millimolesPerLiter),
                                               ("mmol/l", .millimolesPerLiter), ("furlongs", nil)]
        for (text, unit) in table { XCTAssertEqual(GlucoseUnit(wireText: text), unit, text) }
    }
}

final class CompoundTreatmentTests: XCTestCase {
    func testSplitMealBolus() throws {
        let t = try decode(Treatment.self, """
        {"_id":"abc123","eventType":"Meal Bolus","created_at":"2024-05-01T10:00:00Z","insulin":2.5,"carbs":30,"enteredBy":"Loop"}
        """)
        let parts = TreatmentComponent.split(t)
        XCTAssertEqual(parts.map(\.id), ["abc123-carbs", "abc123-insulin"])
        XCTAssertEqual(parts.map(\.kind), [.carbs, .insulin])
        XCTAssertEqual(parts.map(\.value), [30, 2.5])
        XCTAssertEqual(parts.map(\.baseID), ["abc123", "abc123"])
        XCTAssertTrue(parts.allSatisfy { $0.nightscoutEventType == .mealBolus })
        XCTAssertEqual(parts[0].date, Date(timeIntervalSince1970: 1_714_557_600))

        let merged = TreatmentComponent.merge(parts)
        XCTAssertEqual(merged.count, 1)
        let m = merged[0]
        XCTAssertEqual(m.id, "abc123")
        XCTAssertEqual(m.eventType, .mealBolus)
        XCTAssertEqual(m.insulin, 2.5)
        XCTAssertEqual(m.carbs, 30)
        XCTAssertEqual(m.enteredBy, "Loop")
        XCTAssertEqual(m.eventTime?.isoString, "2024-05-01T10:00:00.000Z")
    }

    func testUUIDIdsKeepTheirDashes() {
        let id = "0b8d2c5e-4c1a-4f3e-9d2b-7a6e5f4c3b2a"
        var t = Treatment(common: CommonFields(id: id, createdAt: NightscoutDate(string: "2024-05-01T10:00:00Z")))
        t.insulin = 1; t.carbs = 12
        let parts = TreatmentComponent.split(t)
        XCTAssertEqual(parts.map(\.baseID), [id, id])
        XCTAssertEqual(TreatmentComponent.merge(parts).map(\.id), [id])
        XCTAssertEqual(TreatmentComponent.merge(parts).first?.eventType, .mealBolus)
    }

    func testSplitKindsTable() throws {
        let cases: [(String, [TreatmentComponentKind], [Double])] = [
            (#"{"_id":"a","eventType":"Exercise","duration":45,"created_at":"2024-05-01T10:00:00Z"}"#, [.exercise], [45]),
            (#"{"_id":"b","eventType":"BG Check","glucose":5.55,"units":"mmol","created_at":"2024-05-01T10:00:00Z"}"#, [.bgCheck], [100]),
            (#"{"_id":"c","eventType":"BG Check","glucose":120,"units":"mg/dl","created_at":"2024-05-01T10:00:00Z"}"#, [.bgCheck], [120]),
            (#"{"_id":"d","eventType":"Temp Basal","rate":0.5,"absolute":0.5,"duration":30,"created_at":"2024-05-01T10:00:00Z"}"#, [.basal], [0.5]),
            (#"{"_id":"e","eventType":"Site Change","created_at":"2024-05-01T10:00:00Z"}"#, [.siteChange], [0]),
            (#"{"_id":"f","eventType":"Sensor Start","created_at":"2024-05-01T10:00:00Z"}"#, [.sensorStart], [0]),
            (#"{"_id":"g","eventType":"Pump Battery Change","created_at":"2024-05-01T10:00:00Z"}"#, [.pumpBatteryChange], [0]),
            (#"{"_id":"h","eventType":"Correction Bolus","insulin":1.2,"carbs":null,"created_at":"2024-05-01T10:00:00Z"}"#, [.insulin], [1.2]),
            (#"{"_id":"i","eventType":"Note","notes":"hi","created_at":"2024-05-01T10:00:00Z"}"#, [], []),
        ]
        for (json, kinds, values) in cases {
            let parts = TreatmentComponent.split(try decode(Treatment.self, json))
            XCTAssertEqual(parts.map(\.kind), kinds, json)
            for (p, v) in zip(parts, values) { XCTAssertEqual(p.value, v, accuracy: 1e-9, json) }
        }
        let basal = TreatmentComponent.split(try decode(Treatment.self, cases[3].0))[0]
        XCTAssertEqual(basal.secondaryValue, 30)
        XCTAssertEqual(basal.id, "d-rate")
        XCTAssertEqual(TreatmentComponent.split(try decode(Treatment.self, cases[0].0))[0].id, "a-exericse")
        XCTAssertEqual(TreatmentComponent.split(try decode(Treatment.self, cases[1].0))[0].id, "b-glucose")
        XCTAssertEqual(TreatmentComponent.split(try decode(Treatment.self, cases[4].0))[0].id, "e")
    }

    /// Seed 001 converts `glucose` by its `units`; without units the value is read in the
    /// site's units, or gives no BG check with a reason (5.5 mmol/L is not 5.5 mg/dL).
    func testGlucoseWithoutUnitsUsesTheSiteUnitsOrIsDroppedWithAReason() throws {
        let t = try decode(Treatment.self, #"{"_id":"j","eventType":"BG Check","glucose":5.5,"created_at":"2024-05-01T10:00:00Z"}"#)
        var dropped: [String] = []
        XCTAssertEqual(TreatmentComponent.split(t, siteUnits: nil, dropped: &dropped), [])
        XCTAssertEqual(dropped, ["glucose 5.5 of j has no units and the site's units are not known: no BG check made from it"])
        XCTAssertEqual(TreatmentComponent.split(t).count, 0)
        let mmol = TreatmentComponent.split(t, siteUnits: .millimolesPerLiter)
        XCTAssertEqual(mmol.map(\.kind), [.bgCheck])
        XCTAssertEqual(mmol[0].value, GlucoseUnit.mgdl(fromMmol: 5.5), accuracy: 1e-9)
        XCTAssertEqual(TreatmentComponent.split(t, siteUnits: .milligramsPerDeciliter).map(\.value), [5.5])
        let odd = try decode(Treatment.self, #"{"_id":"k","glucose":99,"units":"furlongs","created_at":"2024-05-01T10:00:00Z"}"#)
        dropped = []
        XCTAssertEqual(TreatmentComponent.split(odd, siteUnits: nil, dropped: &dropped), [])
        XCTAssertEqual(dropped, ["glucose 99.0 of k has unknown units 'furlongs': no BG check made from it"])
        XCTAssertEqual(TreatmentComponent.split(odd, siteUnits: .millimolesPerLiter), [])
    }

    func testUploadFormatPerKind() throws {
        let when = Date(timeIntervalSince1970: 1_714_557_600)
        let table: [(TreatmentComponent, String)] = [
            (TreatmentComponent(id: "x-insulin", date: when, kind: .insulin, value: 2),
             #"{"_id":"x","enteredBy":"xDrip4iOS","eventTime":"2024-05-01T10:00:00.000Z","eventType":"Bolus","insulin":2}"#),
            (TreatmentComponent(id: "x-carbs", date: when, kind: .carbs, value: 15),
             #"{"_id":"x","enteredBy":"xDrip4iOS","eventTime":"2024-05-01T10:00:00.000Z","eventType":"Carbs","carbs":15}"#),
            (TreatmentComponent(id: "x-exericse", date: when, kind: .exercise, value: 30),
             #"{"_id":"x","enteredBy":"xDrip4iOS","eventTime":"2024-05-01T10:00:00.000Z","eventType":"Exercise","duration":30}"#),
            (TreatmentComponent(id: "x-glucose", date: when, kind: .bgCheck, value: 110),
             #"{"_id":"x","enteredBy":"xDrip4iOS","eventTime":"2024-05-01T10:00:00.000Z","eventType":"BG Check","glucose":110,"glucoseType":"Finger","units":"mg/dl"}"#),
            (TreatmentComponent(id: "x-rate", date: when, kind: .basal, value: 0.75, secondaryValue: 30),
             #"{"_id":"x","enteredBy":"xDrip4iOS","eventTime":"2024-05-01T10:00:00.000Z","eventType":"Temp Basal","rate":0.75,"duration":30}"#),
            (TreatmentComponent(id: "x", date: when, kind: .siteChange),
             #"{"_id":"x","enteredBy":"xDrip4iOS","eventTime":"2024-05-01T10:00:00.000Z","eventType":"Site Change"}"#),
            (TreatmentComponent(id: "x-insulin", date: when, kind: .insulin, value: 1, nightscoutEventType: .correctionBolus, enteredBy: "Loop"),
             #"{"_id":"x","enteredBy":"Loop","eventTime":"2024-05-01T10:00:00.000Z","eventType":"Correction Bolus","insulin":1}"#),
        ]
        for (component, json) in table {
            XCTAssertEqual(try jsonTree(component.uploadTreatment(defaultEnteredBy: "xDrip4iOS")), try jsonTree(json), json)
        }
    }

    func testMergeKeepsSeparateTreatmentsApart() {
        let when = Date(timeIntervalSince1970: 1_714_557_600)
        let parts = [
            TreatmentComponent(id: "a-insulin", date: when, kind: .insulin, value: 1),
            TreatmentComponent(id: "b-carbs", date: when, kind: .carbs, value: 10),
            TreatmentComponent(id: "a-carbs", date: when.addingTimeInterval(-60), kind: .carbs, value: 20),
        ]
        let merged = TreatmentComponent.merge(parts)
        XCTAssertEqual(merged.map(\.id), ["a", "b"])
        XCTAssertEqual(merged[0].carbs, 20)
        XCTAssertEqual(merged[0].insulin, 1)
        XCTAssertEqual(merged[0].eventTime?.date, when.addingTimeInterval(-60))
        XCTAssertEqual(merged[1].eventType, .carbs)
    }
}

final class ProfileScheduleTests: XCTestCase {
    func profile(_ tz: String) -> Profile {
        Profile(timezone: tz, basal: [ScheduleItem(seconds: 0, value: 0.5), ScheduleItem(seconds: 2 * 3600 + 1800, value: 0.8),
                                      ScheduleItem(seconds: 6 * 3600, value: 1.2), ScheduleItem(seconds: 22 * 3600, value: 0.7)])
    }

    func testLookupInProfileTimeZone() {
        let p = profile("Europe/Berlin")
        // 2024-01-15 (CET, UTC+1)
        let table: [(Int64, Double)] = [
            (utcMillis(2024, 1, 14, 23, 0), 0.5),   // 00:00 local
            (utcMillis(2024, 1, 15, 1, 29, 59), 0.5), // 02:29:59 local
            (utcMillis(2024, 1, 15, 1, 30), 0.8),   // 02:30 local
            (utcMillis(2024, 1, 15, 5, 0), 1.2),    // 06:00 local
            (utcMillis(2024, 1, 15, 20, 59), 1.2),  // 21:59 local
            (utcMillis(2024, 1, 15, 21, 0), 0.7),   // 22:00 local
        ]
        for (ms, v) in table {
            XCTAssertEqual(p.value(.basal, at: Date(timeIntervalSince1970: Double(ms) / 1000)), v, "\(ms)")
        }
    }

    func testDSTChangeDays() {
        let p = profile("Europe/Berlin")
        // Spring forward 2024-03-31: 02:00 CET → 03:00 CEST. 01:00Z is 03:00 local wall clock.
        XCTAssertEqual(p.value(.basal, at: Date(timeIntervalSince1970: Double(utcMillis(2024, 3, 31, 0, 59)) / 1000)), 0.5) // 01:59 CET
        XCTAssertEqual(p.value(.basal, at: Date(timeIntervalSince1970: Double(utcMillis(2024, 3, 31, 1, 0)) / 1000)), 0.8)  // 03:00 CEST
        XCTAssertEqual(p.value(.basal, at: Date(timeIntervalSince1970: Double(utcMillis(2024, 3, 31, 4, 0)) / 1000)), 1.2)  // 06:00 CEST
        // Fall back 2024-10-27: 03:00 CEST → 02:00 CET; 02:30 happens twice, both 0.8.
        XCTAssertEqual(p.value(.basal, at: Date(timeIntervalSince1970: Double(utcMillis(2024, 10, 27, 0, 30)) / 1000)), 0.8)
        XCTAssertEqual(p.value(.basal, at: Date(timeIntervalSince1970: Double(utcMillis(2024, 10, 27, 1, 30)) / 1000)), 0.8)
        XCTAssertEqual(p.value(.basal, at: Date(timeIntervalSince1970: Double(utcMillis(2024, 10, 27, 0, 15)) / 1000)), 0.5) // 02:15 CEST
        XCTAssertEqual(p.value(.basal, at: Date(timeIntervalSince1970: Double(utcMillis(2024, 10, 27, 5, 0)) / 1000)), 1.2)  // 06:00 CET
    }

    func testCaseInsensitiveZoneAndFallbacks() throws {
        let p = profile("ETC/GMT+5") // UTC−5
        XCTAssertNotNil(p.timeZone)
        XCTAssertEqual(p.value(.basal, at: Date(timeIntervalSince1970: Double(utcMillis(2024, 5, 1, 11, 0)) / 1000)), 1.2) // 06:00
        XCTAssertEqual(p.value(.basal, at: Date(timeIntervalSince1970: Double(utcMillis(2024, 5, 1, 6, 0)) / 1000)), 0.5)  // 01:00
        let utc = profile("")
        XCTAssertNil(utc.timeZone)
        XCTAssertEqual(utc.value(.basal, at: Date(timeIntervalSince1970: Double(utcMillis(2024, 5, 1, 23, 0)) / 1000)), 0.7)
        XCTAssertNil(Profile().value(.sens, at: Date()))
        // Schedule given only as "HH:mm" strings, unsorted: a time before the first step wraps to the last.
        let items = try decode([ScheduleItem].self, #"[{"time":"22:00","value":"3"},{"time":"06:30","value":2}]"#)
        let tz = TimeZone(identifier: "UTC")!
        XCTAssertEqual(ProfileSchedule.value(in: items, at: Date(timeIntervalSince1970: Double(utcMillis(2024, 5, 1, 3, 0)) / 1000), timeZone: tz), 3)
        XCTAssertEqual(ProfileSchedule.value(in: items, at: Date(timeIntervalSince1970: Double(utcMillis(2024, 5, 1, 6, 30)) / 1000), timeZone: tz), 2)
        XCTAssertEqual(items[1].startSeconds, 6 * 3600 + 1800)
    }

    func testVersionStillSet() { XCTAssertFalse(NightscoutKit.version.isEmpty) }
}
