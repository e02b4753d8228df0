import Foundation
import LookoutWire

/// Deterministic, plausible Garmin data: every value is a function of the date (and account).
enum GarminSimData {
    static var utc: Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: "UTC")!
        return c
    }
    static func day(_ d: Date) -> String {
        let c = utc.dateComponents([.year, .month, .day], from: d)
        return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
    }
    static func parse(_ s: String) -> Date? {
        let p = s.split(separator: "-")
        guard s.count == 10, p.count == 3, let y = Int(p[0]), let m = Int(p[1]), let d = Int(p[2]), (1...12).contains(m),
            (1...31).contains(d)
        else { return nil }
        return utc.date(from: DateComponents(year: y, month: m, day: d))
    }
    static func days(from a: String, to b: String) -> [String] {
        guard var d = parse(a), let end = parse(b) else { return [] }
        var out: [String] = []
        while d <= end && out.count < 400 { out.append(day(d)); d += 86400 }
        return out
    }
    /// A pseudo-random number in 0..<1 from a date and a salt (stable across runs).
    static func unit(_ date: String, _ salt: Int) -> Double {
        var h: UInt64 = 1_469_598_103_934_665_603
        for b in (date + "#\(salt)").utf8 { h = (h ^ UInt64(b)) &* 1_099_511_628_211 }
        h ^= h >> 33; h = h &* 0xff51afd7ed558ccd; h ^= h >> 33
        return Double(h % 1_000_000) / 1_000_000
    }
    static func int(_ date: String, _ salt: Int, _ lo: Int, _ hi: Int) -> Int { lo + Int(unit(date, salt) * Double(hi - lo + 1)) }
    static func ms(_ date: String, minutes: Int) -> Int64 { Int64((parse(date)!.timeIntervalSince1970 + Double(minutes) * 60) * 1000) }

    static func profile(_ email: String) -> JSONValue {
        let name = String(email.split(separator: "@").first ?? "runner")
        return [
            "id": 3_141_592, "profileId": 3_141_592, "garminGUID": "5f1b0c2e-0000-4000-8000-00000000beef",
            "displayName": .string(name), "userName": .string(name), "fullName": "Sim Runner", "location": "Lisbon, Portugal",
            "profileImageUrlLarge": .null, "profileImageUrlMedium": .null, "profileImageUrlSmall": .null,
        ]
    }
    static func settings(_ email: String) -> JSONValue {
        [
            "id": 3_141_592,
            "userData": [
                "gender": "FEMALE", "weight": 61200.0, "height": 168.0, "birthDate": "1990-04-12", "measurementSystem": "metric",
                "vo2MaxRunning": 48.0, "lactateThresholdHeartRate": 168,
            ],
            "userSleep": ["sleepTime": 81000, "wakeTime": 23400], "connectDate": .null, "sourceType": .null,
        ]
    }
    static func summary(_ d: String) -> JSONValue {
        let steps = int(d, 1, 3000, 16000)
        return [
            "calendarDate": .string(d), "totalSteps": .int(Int64(steps)), "dailyStepGoal": 8000,
            "totalDistanceMeters": .number(Double(steps) * 0.78), "totalKilocalories": .number(Double(int(d, 2, 1900, 2900))),
            "activeKilocalories": .number(Double(int(d, 3, 200, 900))), "restingHeartRate": .int(Int64(int(d, 4, 48, 58))),
            "minHeartRate": .int(Int64(int(d, 5, 44, 50))), "maxHeartRate": .int(Int64(int(d, 6, 140, 182))),
            "averageStressLevel": .int(Int64(int(d, 7, 18, 45))), "bodyBatteryHighestValue": .int(Int64(int(d, 8, 70, 100))),
            "bodyBatteryLowestValue": .int(Int64(int(d, 9, 5, 30))), "bodyBatteryMostRecentValue": .int(Int64(int(d, 10, 20, 80))),
            "moderateIntensityMinutes": .int(Int64(int(d, 11, 0, 60))), "vigorousIntensityMinutes": .int(Int64(int(d, 12, 0, 40))),
            "floorsAscended": .number(Double(int(d, 13, 0, 25))), "averageSpo2": .number(Double(int(d, 14, 93, 98))),
        ]
    }
    static func steps(_ d: String) -> JSONValue {
        let steps = int(d, 1, 3000, 16000)
        return ["calendarDate": .string(d), "totalSteps": .int(Int64(steps)), "totalDistance": .int(Int64(Double(steps) * 0.78)), "stepGoal": 8000]
    }
    static func heartRate(_ d: String, empty: Bool) -> JSONValue {
        let rest = int(d, 4, 48, 58)
        var values: [JSONValue] = []
        if !empty {
            for i in stride(from: 0, to: 1440, by: 2) {
                let hour = Double(i) / 60
                let activity = hour > 7 && hour < 22 ? 25 * unit(d, 1000 + i) : 4 * unit(d, 1000 + i)
                let bump = abs(hour - 18) < 0.75 ? 70.0 : 0
                values.append([.int(ms(d, minutes: i)), .int(Int64(Double(rest) + activity + bump))])
            }
        }
        return [
            "userProfilePK": 3_141_592, "calendarDate": .string(d),
            "startTimestampGMT": .string("\(d)T00:00:00.0"), "endTimestampGMT": .string("\(d)T23:59:59.0"),
            "maxHeartRate": empty ? .null : .int(Int64(rest + 95)), "minHeartRate": empty ? .null : .int(Int64(rest - 4)),
            "restingHeartRate": empty ? .null : .int(Int64(rest)), "lastSevenDaysAvgRestingHeartRate": .int(Int64(rest)),
            "heartRateValueDescriptors": [["key": "timestamp", "index": 0], ["key": "heartrate", "index": 1]],
            "heartRateValues": empty ? .null : .array(values),
        ]
    }
    static func sleep(_ d: String, empty: Bool) -> JSONValue {
        let deep = int(d, 20, 3600, 6600), light = int(d, 21, 10800, 16200), rem = int(d, 22, 3600, 7200), awake = int(d, 23, 300, 2400)
        let start = ms(d, minutes: -90)
        return [
            "dailySleepDTO": [
                "id": empty ? .null : .int(start), "userProfilePK": 3_141_592, "calendarDate": .string(d),
                "sleepTimeSeconds": empty ? .null : .int(Int64(deep + light + rem)), "deepSleepSeconds": empty ? .null : .int(Int64(deep)),
                "lightSleepSeconds": empty ? .null : .int(Int64(light)), "remSleepSeconds": empty ? .null : .int(Int64(rem)),
                "awakeSleepSeconds": empty ? .null : .int(Int64(awake)),
                "sleepStartTimestampGMT": empty ? .null : .int(start),
                "sleepEndTimestampGMT": empty ? .null : .int(start + Int64(deep + light + rem + awake) * 1000),
                "averageSpO2Value": empty ? .null : .number(Double(int(d, 24, 93, 98))),
                "sleepScores": empty ? .null : ["overall": ["value": .int(Int64(int(d, 25, 55, 95)))]],
            ],
            "sleepMovement": .array([]), "remSleepData": .bool(!empty), "sleepLevels": .array([]),
            "restingHeartRate": .int(Int64(int(d, 4, 48, 58))), "bodyBatteryChange": .int(Int64(int(d, 26, 20, 70))),
        ]
    }
    static func stress(_ d: String) -> JSONValue {
        var stress: [JSONValue] = [], battery: [JSONValue] = []
        var level = Double(int(d, 9, 5, 30))
        for i in stride(from: 0, to: 1440, by: 3) {
            let st = i < 420 ? int(d, 2000 + i, 5, 20) : int(d, 2000 + i, 15, 75)
            stress.append([.int(ms(d, minutes: i)), .int(Int64(st))])
            level = i < 420 ? min(100, level + 0.35) : max(5, level - 0.09 - Double(st) / 900)
            battery.append([.int(ms(d, minutes: i)), .string(i < 420 ? "charging" : "draining"), .int(Int64(level)), 2])
        }
        return [
            "userProfilePK": 3_141_592, "calendarDate": .string(d), "maxStressLevel": .int(Int64(int(d, 30, 70, 99))),
            "avgStressLevel": .int(Int64(int(d, 7, 18, 45))),
            "stressValueDescriptorsDTOList": [["key": "timestamp", "index": 0], ["key": "stressLevel", "index": 1]],
            "stressValuesArray": .array(stress), "bodyBatteryValuesArray": .array(battery),
        ]
    }
    static func bodyBatteryEvents(_ d: String) -> JSONValue {
        [
            [
                "event": [
                    "eventType": "SLEEP", "eventStartTimeGmt": .string("\(d)T00:00:00.0"), "timezoneOffset": 0,
                    "durationInMilliseconds": 25_200_000, "bodyBatteryImpact": .int(Int64(int(d, 26, 20, 70))),
                    "feedbackType": "GOOD_SLEEP", "shortFeedback": "RESTFUL_NIGHT",
                ],
                "activityName": .null, "activityType": .null, "activityId": .null, "averageStress": .number(12.0),
            ],
            [
                "event": [
                    "eventType": "ACTIVITY", "eventStartTimeGmt": .string("\(d)T18:00:00.0"), "timezoneOffset": 0,
                    "durationInMilliseconds": 2_700_000, "bodyBatteryImpact": .int(Int64(-int(d, 27, 5, 20))),
                    "feedbackType": "EXERCISE_RUNNING", "shortFeedback": "EXERCISE_IMPACT",
                ],
                "activityName": "Evening Run", "activityType": "running", "activityId": .int(idFor(d)),
                "averageStress": .number(55.0),
            ],
        ]
    }
    static func hrv(_ d: String) -> JSONValue {
        let avg = int(d, 40, 38, 62)
        return [
            "userProfilePk": 3_141_592,
            "hrvSummary": [
                "calendarDate": .string(d), "weeklyAvg": .int(Int64(avg + 1)), "lastNightAvg": .int(Int64(avg)),
                "lastNight5MinHigh": .int(Int64(avg + 20)),
                "baseline": ["lowUpper": 40, "balancedLow": 44, "balancedUpper": 60, "markerValue": 0.5],
                "status": .string(avg < 44 ? "UNBALANCED" : "BALANCED"), "feedbackPhrase": "HRV_BALANCED_2",
                "createTimeStamp": .string("\(d)T06:10:00.0"),
            ],
            "hrvReadings": .array((0..<8).map { i in
                ["hrvValue": .int(Int64(int(d, 41 + i, avg - 10, avg + 12))), "readingTimeGMT": .string("\(d)T0\(i):05:00.0"),
                 "readingTimeLocal": .string("\(d)T0\(i):05:00.0")]
            }),
        ]
    }
    static func weight(_ d: String, empty: Bool) -> JSONValue {
        let grams = 61000.0 + Double(int(d, 50, -800, 800))
        let entry: JSONValue = [
            "samplePk": .int(ms(d, minutes: 420)), "date": .int(ms(d, minutes: 420)), "calendarDate": .string(d), "weight": .number(grams),
            "bmi": .number((grams / 1000 / (1.68 * 1.68) * 10).rounded() / 10), "bodyFat": .number(Double(int(d, 51, 190, 240)) / 10),
            "bodyWater": .number(Double(int(d, 52, 540, 580)) / 10), "boneMass": 2700, "muscleMass": 27000, "sourceType": "INDEX_SCALE",
            "timestampGMT": .int(ms(d, minutes: 420)), "weightDelta": .null,
        ]
        let list: [JSONValue] = empty || unit(d, 53) < 0.3 ? [] : [entry]
        return ["startDate": .string(d), "endDate": .string(d), "dateWeightList": .array(list), "totalAverage": ["weight": list.isEmpty ? .null : .number(grams)]]
    }
    static func idFor(_ d: String) -> Int64 { 17_000_000_000 + Int64(parse(d)!.timeIntervalSince1970 / 86400) }
    /// 60 activities, one every day or two back from today, newest first.
    static func activities(today: String) -> [(Int64, JSONValue)] {
        let types = ["running", "cycling", "walking", "lap_swimming", "strength_training"]
        var out: [(Int64, JSONValue)] = []
        var date = parse(today)!
        for i in 0..<60 {
            let d = day(date)
            let type = types[int(d, 60, 0, types.count - 1)]
            let duration = Double(int(d, 61, 1200, 5400))
            let distance = type == "strength_training" ? 0 : duration * (type == "cycling" ? 7.5 : type == "running" ? 2.9 : 1.3)
            let id = idFor(d)
            out.append((id, [
                "activityId": .int(id), "activityName": .string("\(type.replacingOccurrences(of: "_", with: " ").capitalized) \(i + 1)"),
                "startTimeLocal": .string("\(d) 18:00:00"), "startTimeGMT": .string("\(d) 17:00:00"),
                "activityType": ["typeId": .int(Int64(int(d, 60, 0, 4) + 1)), "typeKey": .string(type)],
                "distance": .number(distance.rounded()), "duration": .number(duration), "elevationGain": .number(Double(int(d, 62, 0, 400))),
                "averageSpeed": .number(duration > 0 ? (distance / duration * 1000).rounded() / 1000 : 0),
                "calories": .number(Double(int(d, 63, 150, 900))), "averageHR": .number(Double(int(d, 64, 110, 160))),
            ]))
            date -= Double(1 + i % 2) * 86400
        }
        return out
    }
}
