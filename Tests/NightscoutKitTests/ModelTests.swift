import Foundation
import XCTest
@testable import NightscoutKit

final class ModelTests: XCTestCase {
    // Spec §2.2 entry example (v1 GET).
    let entryJSON = """
    { "_id": "5c5a2404e0196f4d3d9a718a", "type": "sgv", "sgv": 171, "direction": "Flat",
      "trend": 4, "device": "dexcom", "date": 1405763055000,
      "dateString": "2014-07-19T09:44:15.000Z", "sysTime": "2014-07-19T09:44:15.000Z",
      "utcOffset": -420 }
    """

    func testEntryFromSpecExample() throws {
        let e = try decode(Entry.self, entryJSON)
        XCTAssertEqual(e.id, "5c5a2404e0196f4d3d9a718a")
        XCTAssertEqual(e.type, .sgv)
        XCTAssertEqual(e.sgv, 171)
        XCTAssertEqual(e.direction, .flat)
        XCTAssertEqual(e.trend, 4)
        XCTAssertEqual(e.device, "dexcom")
        XCTAssertEqual(e.date?.epochMilliseconds, 1_405_763_055_000)
        XCTAssertEqual(e.dateString?.epochMilliseconds, 1_405_763_055_000)
        XCTAssertEqual(e.sysTime?.isoString, "2014-07-19T09:44:15.000Z")
        XCTAssertEqual(e.utcOffset, -420)
        XCTAssertTrue(e.extra.isEmpty)
        // Exact round trip.
        XCTAssertEqual(try jsonTree(e), try jsonTree(entryJSON))
    }

    func testEntryArrayDecodes() throws {
        let entries = try decode([Entry].self, "[\(entryJSON)]")
        XCTAssertEqual(entries.count, 1)
        XCTAssertEqual(entries[0].time?.epochMilliseconds, 1_405_763_055_000)
    }

    func testV3EntryCreateExample() throws {
        let json = #"{"date":1714557600000,"app":"MySDK","device":"sim","type":"sgv","sgv":120,"direction":"Flat","units":"mg/dl"}"#
        let e = try decode(Entry.self, json)
        XCTAssertEqual(e.app, "MySDK")
        XCTAssertEqual(e.units, "mg/dl")
        XCTAssertEqual(e.sgv, 120)
        XCTAssertEqual(try jsonTree(e), try jsonTree(json))
    }

    func testEntryLenientStringValues() throws {
        // v1 stores values as sent: "sgv":"199" and a string trend.
        let e = try decode(Entry.self, #"{"type":"sgv","sgv":"199","trend":"4","date":1405763055000}"#)
        XCTAssertEqual(e.sgv, 199)
        XCTAssertEqual(e.trend, 4)
    }

    func testUnknownFieldsSurviveReadModifyWrite() throws {
        let json = """
        {"date":1714557600000,"type":"sgv","sgv":120,"trendRate":1.25,"isCalibration":false,
         "condition":"aboveRange","big":9007199254740993,"nested":{"a":[1,2.5,"x",null,true]}}
        """
        var e = try decode(Entry.self, json)
        XCTAssertEqual(e.extra["trendRate"], .double(1.25))
        XCTAssertEqual(e.extra["big"], .int(9_007_199_254_740_993))
        XCTAssertEqual(e.extra["condition"], .string("aboveRange"))
        e.sgv = 121
        let tree = try jsonTree(e)
        XCTAssertEqual(tree["sgv"], .int(121))
        XCTAssertEqual(tree["big"], .int(9_007_199_254_740_993))
        XCTAssertEqual(tree["nested"], try jsonTree(#"{"a":[1,2.5,"x",null,true]}"#))
        XCTAssertEqual(tree["isCalibration"], .bool(false))
        // Exact 64-bit integer text in the encoded output.
        let text = String(decoding: try JSONEncoder().encode(e), as: UTF8.self)
        XCTAssertTrue(text.contains("9007199254740993"), text)
        let again = try JSONDecoder().decode(Entry.self, from: JSONEncoder().encode(e))
        XCTAssertEqual(again, e)
    }

    func testTreatmentFromSpecExample() throws {
        let json = """
        { "_id": "6568920febd0ec3b8f56f4d8", "eventType": "Carb Correction", "enteredBy": "loop://iPhone",
          "created_at": "2023-11-30T13:45:41.000Z", "timestamp": "2023-11-30T13:45:41Z",
          "carbs": 10, "absorptionTime": 180, "foodType": "🍕", "syncIdentifier": "abc",
          "userEnteredAt": "2023-11-30T13:45:50Z", "utcOffset": 0, "insulin": null }
        """
        let t = try decode(Treatment.self, json)
        XCTAssertEqual(t.eventType, .carbCorrection)
        XCTAssertEqual(t.carbs, 10)
        XCTAssertNil(t.insulin)
        XCTAssertEqual(t.absorptionTime, 180)
        XCTAssertEqual(t.foodType, "🍕")
        XCTAssertEqual(t.createdAt?.epochMilliseconds, utcMillis(2023, 11, 30, 13, 45, 41))
        XCTAssertEqual(t.timestamp?.epochMilliseconds, utcMillis(2023, 11, 30, 13, 45, 41))
        XCTAssertEqual(t.extra["userEnteredAt"], .string("2023-11-30T13:45:50Z"))
        XCTAssertEqual(t.time?.isoString, "2023-11-30T13:45:41.000Z")
        // Exact round trip, including the server's `null`; setting the field replaces it.
        XCTAssertEqual(try jsonTree(t), try jsonTree(json))
        var edited = t
        edited.insulin = 1.5
        XCTAssertEqual(try jsonTree(edited)["insulin"], .double(1.5))
    }

    func testV3TreatmentExample() throws {
        let json = #"{"date":1613057404186,"app":"AndroidAPS","device":"Samsung XCover 4-861536030196001","eventType":"Correction Bolus","insulin":0.3}"#
        let t = try decode(Treatment.self, json)
        XCTAssertEqual(t.eventType, .correctionBolus)
        XCTAssertEqual(t.insulin, 0.3)
        XCTAssertEqual(t.date?.epochMilliseconds, 1_613_057_404_186)
        XCTAssertEqual(try jsonTree(t), try jsonTree(json))
    }

    func testEveryKnownEventTypeAndUnknownKept() throws {
        for type in EventType.known {
            let t = try decode(Treatment.self, "{\"eventType\":\"\(type.rawValue)\"}")
            XCTAssertEqual(t.eventType, type)
            XCTAssertTrue(t.eventType!.isKnown)
        }
        let odd = try decode(Treatment.self, #"{"eventType":"Some Future Thing","created_at":"2024-01-01T00:00:00Z"}"#)
        XCTAssertEqual(odd.eventType?.rawValue, "Some Future Thing")
        XCTAssertFalse(odd.eventType!.isKnown)
        XCTAssertEqual(try jsonTree(odd)["eventType"], .string("Some Future Thing"))
        XCTAssertEqual(EventType.known.count, Set(EventType.known).count)
        for name in ["BG Check", "Snack Bolus", "Meal Bolus", "Correction Bolus", "Carb Correction", "Combo Bolus",
                     "Announcement", "Note", "Question", "Exercise", "Site Change", "Sensor Start", "Sensor Change",
                     "Pump Battery Change", "Insulin Change", "Temp Basal", "Profile Switch", "Temporary Target",
                     "Temporary Override", "OpenAPS Offline", "Bolus Wizard", "Suspend Pump", "Resume Pump"] {
            XCTAssertTrue(EventType(rawValue: name).isKnown, name)
        }
    }

    func testDeviceStatusLoopShape() throws {
        let json = """
        {"_id":"65a1b2c3d4e5f60718293a4b","device":"loop://iPhone","created_at":"2024-05-01T12:00:00.000Z","utcOffset":0,
         "pump":{"clock":"2024-05-01T12:00:00Z","pumpID":"123","reservoir":120.5,"suspended":false},
         "uploader":{"name":"iPhone","timestamp":"2024-05-01T12:00:00Z","battery":78,"isCharging":true,"model":"15"},
         "loop":{"name":"Loop","version":"3.4","iob":{"timestamp":"2024-05-01T12:00:00Z","iob":1.25},
                 "predicted":{"startDate":"2024-05-01T12:00:00Z","values":[120,121,122]}},
         "override":{"active":false},"radioAdapter":{"name":"RileyLink"}}
        """
        let s = try decode(DeviceStatus.self, json)
        XCTAssertEqual(s.device, "loop://iPhone")
        XCTAssertEqual(s.uploader?.battery, 78)
        XCTAssertEqual(s.uploader?.isCharging, true)
        XCTAssertEqual(s.uploader?.extra["model"], .string("15"))
        XCTAssertEqual(s.loop?["iob"]?["iob"], .double(1.25))
        XCTAssertEqual(s.pump?["reservoir"], .double(120.5))
        XCTAssertEqual(s.extra["radioAdapter"]?["name"], .string("RileyLink"))
        XCTAssertEqual(try jsonTree(s), try jsonTree(json))
    }

    let profileJSON = """
    { "defaultProfile": "Default", "startDate": "2024-05-01T10:00:00Z", "mills": "1714557600000",
      "units": "mg/dL", "enteredBy": "Loop",
      "store": { "Default": { "dia": 6, "timezone": "ETC/GMT+5", "carbs_hr": "0", "delay": "0", "units": "mg/dL",
          "basal": [{"time":"00:00","value":0.8,"timeAsSeconds":0}],
          "carbratio": [{"time":"00:00","value":10,"timeAsSeconds":0}],
          "sens": [{"time":"00:00","value":45,"timeAsSeconds":0}],
          "target_low": [{"time":"00:00","value":100,"timeAsSeconds":0}],
          "target_high": [{"time":"00:00","value":110,"timeAsSeconds":0}] } },
      "loopSettings": { "dosingEnabled": true, "overridePresets": [ {"name":"Exercise","symbol":"🏃","duration":3600,
          "targetRange":[140,160],"insulinNeedsScaleFactor":0.5} ], "scheduleOverride": null,
          "minimumBGGuard": 80, "preMealTargetRange": [80,90], "maximumBasalRatePerHour": 4,
          "maximumBolus": 10, "deviceToken": "abcdef", "bundleIdentifier": "com.XXXXXXXXXX.loopkit.Loop",
          "dosingStrategy": "automaticBolus" },
      "isAPNSProduction": true }
    """

    func testProfileFromSpecExample() throws {
        let p = try decode(ProfileSet.self, profileJSON)
        XCTAssertEqual(p.defaultProfile, "Default")
        XCTAssertEqual(p.startDate?.epochMilliseconds, 1_714_557_600_000)
        XCTAssertEqual(p.extra["mills"], .string("1714557600000"))
        XCTAssertEqual(p.extra["isAPNSProduction"], .bool(true))
        let d = try XCTUnwrap(p.activeProfile)
        XCTAssertEqual(d.dia, 6)
        XCTAssertEqual(d.basal, [ScheduleItem(seconds: 0, value: 0.8)])
        XCTAssertEqual(d.carbratio.first?.value, 10)
        XCTAssertEqual(d.sens.first?.value, 45)
        XCTAssertEqual(d.targetLow.first?.value, 100)
        XCTAssertEqual(d.targetHigh.first?.value, 110)
        XCTAssertEqual(d.extra["carbs_hr"], .string("0"))
        XCTAssertNotNil(d.timeZone)
        XCTAssertEqual(p.loopSettings?["deviceToken"], .string("abcdef"))
        XCTAssertEqual(p.loopSettings?["scheduleOverride"], .null)
        XCTAssertEqual(try jsonTree(p), try jsonTree(profileJSON))
    }

    func testFoodRoundTrip() throws {
        let json = #"{"_id":"5f0c1a2b3c4d5e6f70819203","food":"food","category":"Fruit","subcategory":"","name":"Apple","portion":100,"unit":"g","carbs":12,"fat":0,"protein":0.3,"energy":218,"gi":2,"hideafteruse":false,"hidden":false,"position":99999,"created_at":"2024-01-02T03:04:05.678Z","portions":1}"#
        let f = try decode(Food.self, json)
        XCTAssertEqual(f.name, "Apple")
        XCTAssertEqual(f.carbs, 12)
        XCTAssertEqual(f.gi, 2)
        XCTAssertEqual(f.protein, 0.3)
        XCTAssertEqual(try jsonTree(f), try jsonTree(json))
    }

    func testSettingsKeepsPayloadAndCommonFields() throws {
        let json = #"{"identifier":"aaps","date":1714557600000,"utcOffset":60,"app":"AAPS","srvCreated":1714557600100,"srvModified":1714557600200,"subject":"aaps-uploader","isValid":true,"isReadOnly":false,"settings":{"units":"mmol","x":[1,2]}}"#
        let s = try decode(NightscoutSettings.self, json)
        XCTAssertEqual(s.identifier, "aaps")
        XCTAssertEqual(s.utcOffset, 60)
        XCTAssertEqual(s.app, "AAPS")
        XCTAssertEqual(s.srvCreated?.epochMilliseconds, 1_714_557_600_100)
        XCTAssertEqual(s.srvModified?.epochMilliseconds, 1_714_557_600_200)
        XCTAssertEqual(s.subject, "aaps-uploader")
        XCTAssertEqual(s.isValid, true)
        XCTAssertEqual(s.isReadOnly, false)
        XCTAssertFalse(s.isDeleted)
        XCTAssertEqual(s.extra["settings"]?["units"], .string("mmol"))
        XCTAssertEqual(try jsonTree(s), try jsonTree(json))
    }

    func testOddValuesAreKeptNotFatal() throws {
        let json = #"{"type":"sgv","sgv":"HIGH","date":1405763055000,"dateString":"Sat Jul 19 2014 02:44:15 GMT-0700","trend":2.5,"noise":null,"uploader":"x"}"#
        let e = try decode(Entry.self, json)
        XCTAssertNil(e.sgv)
        XCTAssertNil(e.dateString)
        XCTAssertNil(e.trend)
        XCTAssertEqual(e.extra["sgv"], .string("HIGH"))
        XCTAssertEqual(e.extra["dateString"], .string("Sat Jul 19 2014 02:44:15 GMT-0700"))
        XCTAssertEqual(e.time?.epochMilliseconds, 1_405_763_055_000)
        XCTAssertEqual(try jsonTree(e), try jsonTree(json))
        let s = try decode(DeviceStatus.self, #"{"device":"d","uploader":"not an object","created_at":"2024-05-01T12:00:00Z"}"#)
        XCTAssertNil(s.uploader)
        XCTAssertEqual(s.extra["uploader"], .string("not an object"))
        var fixed = e
        fixed.sgv = 400
        XCTAssertEqual(try jsonTree(fixed)["sgv"], .int(400))
    }

    func testSoftDeletedDocument() throws {
        let t = try decode(Treatment.self, #"{"identifier":"x","isValid":false,"srvModified":1714557600200,"date":1714557600000}"#)
        XCTAssertTrue(t.isDeleted)
        XCTAssertEqual(t.primaryKey, "x")
    }
}
