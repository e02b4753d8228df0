import Foundation
import LookoutWire
@testable import NightscoutKit
import XCTest

/// A hostile or broken server cannot trap the client: every decoder of a server answer gets the
/// edge values (beyond Int64, beyond a JavaScript date, non-finite literals, numbers as strings)
/// in every numeric field, and then everything that turns a decoded number into an integer or a
/// date (times, ISO strings, schedules, re-encoding, error texts) is exercised. A trap fails the
/// whole test run, so these only assert what comes out where it matters.
final class HostileNumberTests: XCTestCase {
    static let edges = [
        "0", "-0", "-1", "0.5", "1e19", "-1e19", "1e300", "-1e300", "1e999", "-1e999", "9223372036854775807",
        "-9223372036854775808", "9223372036854775808", "18446744073709551616", "-11958188485021344",
        "8640000000000000", "9000000000000001", "1.7976931348623157e308", "5e-324", "\"1e300\"", "\"-1e19\"",
        "\"99999999999999999999\"", "\"9223372036854775807\"", "\"NaN\"", "\"Infinity\"", "\"-Infinity\"",
        "\"+287396-01-01T00:00:00Z\"", "\"Wed, 01 Jan 9223372036854775807 00:00:00 GMT\"", "true", "null", "[]", "{}",
    ]

    /// Every path to a number (or a numeric string) in `v`.
    static func numericPaths(_ v: JSONValue, _ path: [String] = []) -> [[String]] {
        switch v {
        case .int, .double: return [path]
        case .string(let s) where Double(s) != nil || NightscoutDate(string: s) != nil: return [path]
        case .object(let o): return o.flatMap { numericPaths($0.value, path + [$0.key]) }
        case .array(let a): return a.enumerated().flatMap { numericPaths($0.element, path + [String($0.offset)]) }
        default: return []
        }
    }

    /// `v` with the value at `path` replaced by the JSON text `literal`, as JSON text.
    static func replacing(_ v: JSONValue, at path: [String], with literal: String) -> String {
        guard let first = path.first else { return literal }
        switch v {
        case .object(let o):
            let members = o.sorted { $0.key < $1.key }.map { k, x in
                JSONValue.string(k).jsonString + ":" + (k == first ? replacing(x, at: Array(path.dropFirst()), with: literal) : x.jsonString)
            }
            return "{" + members.joined(separator: ",") + "}"
        case .array(let a):
            let items = a.enumerated().map { i, x in
                String(i) == first ? replacing(x, at: Array(path.dropFirst()), with: literal) : x.jsonString
            }
            return "[" + items.joined(separator: ",") + "]"
        default: return v.jsonString
        }
    }

    /// Decodes every variant of `sample` as `T` (through the tree decoder the client uses and
    /// through `JSONDecoder`) and runs `use` on what decodes; returns how many decoded.
    @discardableResult
    func everyVariant<T: Decodable>(_ type: T.Type, _ sample: JSONValue, file: StaticString = #filePath, line: UInt = #line,
                                    _ use: (T) throws -> Void = { _ in }) throws -> Int {
        let paths = Self.numericPaths(sample)
        XCTAssertFalse(paths.isEmpty, "no numeric fields in the sample", file: file, line: line)
        var decoded = 0
        for path in paths {
            for edge in Self.edges {
                let text = Self.replacing(sample, at: path, with: edge)
                if let tree = try? JSONParser.parse(text), let value = try? JSONValueDecoder.decode(T.self, from: tree) {
                    decoded += 1
                    try use(value)
                }
                if let value = try? JSONDecoder().decode(T.self, from: Data(text.utf8)) {
                    try use(value)
                }
            }
        }
        return decoded
    }

    /// What a script or the outbox does with a decoded document's numbers.
    func exercise(_ c: CommonFields) {
        for d in [c.eventTime, c.srvModified, c.srvCreated].compactMap({ $0 }) {
            _ = d.date
            _ = d.isoString
            XCTAssertLessThanOrEqual(abs(Double(d.epochMilliseconds)), NightscoutDate.largestMilliseconds * 1.001)
        }
    }

    func testEntryDecoderSurvivesEdgeNumbersInEveryField() throws {
        let sample: JSONValue = [
            "_id": "65f0a0b0c0d0e0f001020304", "identifier": "x", "type": "sgv", "sgv": 104, "date": 1_714_557_600_000,
            "dateString": "2024-05-01T10:00:00.000Z", "sysTime": "2024-05-01T10:00:00.000Z", "utcOffset": 120,
            "direction": "Flat", "trend": 4, "delta": 1.5, "noise": 1, "filtered": 120_000, "unfiltered": 121_000,
            "rssi": 100, "mbg": 110, "slope": 1.2, "intercept": 3, "scale": 1, "srvModified": 1_714_557_600_500,
            "srvCreated": 1_714_557_600_500, "mills": 1_714_557_600_000,
        ]
        let n = try everyVariant(Entry.self, sample) { e in
            self.exercise(e.common)
            if let s = e.sgv { XCTAssertTrue(s.isFinite) }
            _ = try JSONEncoder().encode(e)
        }
        XCTAssertGreaterThan(n, 0)
    }

    func testTreatmentAndDeviceStatusDecodersSurviveEdgeNumbersInEveryField() throws {
        let treatment: JSONValue = [
            "_id": "65f0a0b0c0d0e0f001020304", "eventType": "Meal Bolus", "created_at": "2024-05-01T10:00:00.000Z",
            "date": 1_714_557_600_000, "mills": 1_714_557_600_000, "insulin": 2.5, "carbs": 30, "glucose": 120,
            "glucoseType": "Finger", "units": "mg/dl", "duration": 30, "durationInMilliseconds": 1_800_000,
            "absolute": 0.8, "rate": 0.8, "percent": -20, "preBolus": 10, "targetTop": 140, "targetBottom": 90,
            "utcOffset": 0, "srvModified": 1_714_557_600_500, "amount": 1, "splitNow": 50, "splitExt": 50,
        ]
        try everyVariant(Treatment.self, treatment) { t in
            self.exercise(t.common)
            _ = try JSONEncoder().encode(t)
        }
        let status: JSONValue = [
            "_id": "65f0a0b0c0d0e0f001020304", "device": "loop://iPhone", "created_at": "2024-05-01T10:00:00.000Z",
            "date": 1_714_557_600_000, "utcOffset": 0, "uploaderBattery": 80,
            "uploader": ["battery": 80, "batteryVoltage": 3.9, "timestamp": "2024-05-01T10:00:00.000Z"],
            "pump": ["reservoir": 100.5, "battery": ["percent": 50], "clock": "2024-05-01T10:00:00.000Z"],
            "loop": ["iob": ["iob": 1.2, "timestamp": "2024-05-01T10:00:00.000Z"], "cob": ["cob": 20],
                     "predicted": ["values": [100, 110], "startDate": "2024-05-01T10:00:00.000Z"]],
        ]
        try everyVariant(DeviceStatus.self, status) { s in
            self.exercise(s.common)
            _ = try JSONEncoder().encode(s)
        }
    }

    func testProfileFoodAndSettingsDecodersSurviveEdgeNumbersInEveryField() throws {
        let item: JSONValue = ["time": "00:00", "value": 0.8, "timeAsSeconds": 0]
        let profile: JSONValue = [
            "_id": "65f0a0b0c0d0e0f001020304", "defaultProfile": "Default", "startDate": "2024-01-01T00:00:00.000Z",
            "mills": 1_704_067_200_000, "date": 1_704_067_200_000, "created_at": "2024-01-01T00:00:00.000Z",
            "store": [
                "Default": [
                    "dia": 6, "carbs_hr": 20, "delay": 20, "timezone": "UTC", "units": "mg/dl",
                    "basal": [item, ["time": "06:00", "value": 1.1]], "carbratio": [item],
                    "sens": [item], "target_low": [item], "target_high": [item],
                ]
            ],
        ]
        let at = Date(timeIntervalSince1970: 1_714_557_600)
        try everyVariant(ProfileSet.self, profile) { set in
            self.exercise(set.common)
            for p in set.store.values {
                for kind in ProfileScheduleKind.allCases { _ = p.value(kind, at: at) }
            }
            _ = try JSONEncoder().encode(set)
        }
        // A schedule time no clock has, in the string form too.
        for time in ["99999999999999999:00", "-5:00", "00:99999999999999999", "1:2:999999999999999999"] {
            let set = try JSONDecoder().decode(ProfileSet.self, from: Data(Self.replacing(profile, at: ["store", "Default", "basal", "1", "time"], with: "\"\(time)\"").utf8))
            XCTAssertEqual(set.store["Default"]?.value(.basal, at: at), 0.8, time)
        }
        let food: JSONValue = [
            "_id": "65f0a0b0c0d0e0f001020304", "type": "food", "name": "Apple", "carbs": 15, "fat": 0, "protein": 0,
            "energy": 52, "portion": 100, "gi": 2, "created_at": "2024-05-01T10:00:00.000Z",
        ]
        try everyVariant(Food.self, food) { f in
            self.exercise(f.common)
            _ = try JSONEncoder().encode(f)
        }
        let settings: JSONValue = [
            "identifier": "s", "date": 1_714_557_600_000, "utcOffset": 0, "app": "x", "srvModified": 1_714_557_600_000,
            "value": ["alarmHigh": 260, "thresholds": ["bgHigh": 260]],
        ]
        try everyVariant(NightscoutSettings.self, settings) { s in self.exercise(s.common) }
    }

    func testStatusAuthAndV3AnswerDecodersSurviveEdgeNumbers() throws {
        let status: JSONValue = [
            "status": "ok", "name": "nightscout", "version": "15.0.7", "serverTime": "2024-05-01T10:00:00.000Z",
            "serverTimeEpoch": 1_714_557_600_000, "apiEnabled": true,
            "settings": ["units": "mg/dl", "thresholds": ["bgHigh": 260, "bgLow": 55]],
        ]
        try everyVariant(V1ServerStatus.self, status) { s in
            if let t = s.serverTimeEpoch { XCTAssertLessThanOrEqual(abs(Double(t)), NightscoutDate.largestMilliseconds) }
        }
        let verify: JSONValue = [
            "canRead": true, "canWrite": false, "isAdmin": false, "message": "OK", "rolefound": "FOUND", "permissions": "ROLE",
            "status": 200,
        ]
        // verifyauth has no number but `status`; a wrong type anywhere is a decoding error, not a trap.
        _ = try? everyVariant(V1AuthVerification.self, verify)
        let version: JSONValue = [
            "version": "15.0.7", "apiVersion": "3.0.3-alpha", "srvDate": 1_714_557_600_000,
            "storage": ["storage": "mongodb", "version": "6.0"],
        ]
        try everyVariant(V3Envelope<V3Version>.self, ["status": 200, "result": version])
        try everyVariant(V3Envelope<V3Status>.self, ["status": 200, "result": version.merging(["apiPermissions": ["entries": "crud"]])])
        let lastModified: JSONValue = ["srvDate": 1_714_557_600_000, "collections": ["entries": 1_714_557_600_000, "treatments": 1]]
        try everyVariant(V3Envelope<V3LastModified>.self, ["status": 200, "result": lastModified])
        try everyVariant(V3WriteResult.self, ["status": 201, "identifier": "x", "lastModified": 1_714_557_600_000])
        let grant: JSONValue = [
            "token": "a.b.c", "sub": "me", "permissionGroups": [["*"]], "iat": 1_714_557_600, "exp": 1_714_586_400,
        ]
        try everyVariant(JWTGrant.self, grant) { g in _ = g.description }
        let subject: JSONValue = [
            "_id": "65f0a0b0c0d0e0f001020304", "name": "me", "roles": ["admin"], "accessToken": "me-0123456789abcdef",
            "created_at": "2024-05-01T10:00:00.000Z",
        ]
        _ = try? everyVariant(AuthorizationSubject.self, subject) { s in _ = s.description }
    }

    func testRemoteCommandDecoderSurvivesEdgeNumbers() throws {
        let command: JSONValue = [
            "_id": "65f0a0b0c0d0e0f001020304", "version": "2.0", "createdDate": "2024-05-01T10:00:00.000Z",
            "sendNotification": true, "otp": "123456", "status": ["state": "Pending", "message": ""],
            "action": ["carbs": ["amountInGrams": 20, "absorptionTime": 10800, "startDate": "2024-05-01T10:00:00.000Z"]],
        ]
        for path in Self.numericPaths(command) {
            for edge in Self.edges {
                guard let tree = try? JSONParser.parse(Self.replacing(command, at: path, with: edge)) else { continue }
                if let c = try? RemoteCommand(json: tree) { _ = c.encoded(includingID: true); _ = c.description }
            }
        }
    }

    /// Headers and texts a server controls: `Retry-After`, HTTP dates, the history `ETag`.
    func testServerHeadersAtTheEdgesGiveBoundedValues() {
        for text in ["1e300", "1e19", "9223372036854775808", "Wed, 01 Jan 9223372036854775807 00:00:00 GMT",
                     "Sat, 01 Jan 275760 00:00:00 GMT", "-1", "inf"] {
            if let wait = HTTPDate.retryAfter(text) {
                XCTAssertLessThanOrEqual(wait, HTTPDate.largestRetryAfter, text)
                let error = NightscoutError.temporarilyUnavailable(status: 503, retryAfter: wait, body: "")
                _ = error.description
            }
        }
        XCTAssertNil(HTTPDate.parse("Wed, 01 Jan 9223372036854775807 00:00:00 GMT"))
        XCTAssertNil(HTTPDate.parse("Wed, 01 Jan -9223372036854775807 00:00:00 GMT"))
        _ = NightscoutError.authenticationBackoff(retryAfter: HTTPDate.largestRetryAfter).description
        XCTAssertEqual(ISO8601.epochMilliseconds(Date(timeIntervalSince1970: 1e300)), .max)
        XCTAssertEqual(ISO8601.epochMilliseconds(Date(timeIntervalSince1970: -1e300)), .min)
        _ = ISO8601.format(Date(timeIntervalSince1970: 1e300))
        _ = HTTPDate.format(Date(timeIntervalSince1970: -1e300))
    }
}

private extension JSONValue {
    func merging(_ other: [String: JSONValue]) -> JSONValue {
        guard case .object(var o) = self else { return self }
        for (k, v) in other { o[k] = v }
        return .object(o)
    }
}
