import AsyncHTTPClient
import Foundation
import LookoutSim
import LookoutWire
import NIOCore
import NIOHTTP1
import XCTest

/// Generated requests against every route of the Nightscout simulator (v1, v2, v3): bodies,
/// query parameters, path segments and headers with numbers at the edges (beyond Int64 and JS
/// date range, non-finite literals), wrong types, deep nesting and huge strings. The simulator
/// must stay alive and answer every request with a status; an error answer is JSON with that
/// status. Seeded, so a failure repeats; `LOOKOUT_SIM_FUZZ_REQUESTS` sets the number of requests
/// (default 1,500) and `LOOKOUT_SIM_FUZZ_SEED` the seed for a long run (Fuzz/README.md).
final class NightscoutGeneratedInputTests: XCTestCase {
    func testGeneratedRequestsNeverCrashAndAlwaysAnswerWithAStatus() async throws {
        let env = ProcessInfo.processInfo.environment
        let count = env["LOOKOUT_SIM_FUZZ_REQUESTS"].flatMap { Int($0) } ?? 1_500
        let seed = env["LOOKOUT_SIM_FUZZ_SEED"].flatMap { UInt64($0) } ?? 27
        let h = SimHarness()
        try await h.start()
        await h.sim.seed("entries", [["type": "sgv", "sgv": 104, "date": 1_714_557_000_000, "identifier": "e1"]])
        let admin = try await h.bearer("fuzz-admin", roles: ["admin"])
        let token = await h.sim.addSubject(name: "fuzz-reader", roles: ["readable"])
        var gen = RequestGenerator(seed: seed, admin: admin, token: token)
        var statuses: [Int: Int] = [:]
        let started = Date()
        for i in 0..<count {
            let r = gen.next()
            let answer: HTTPResult
            do {
                answer = try await h.request(r.method, r.path, headers: r.headers, rawBody: r.body)
            } catch {
                // The connection failed: was it the simulator?
                let alive = try? await h.request(.GET, "/api/v3/version")
                XCTAssertEqual(alive?.status, 200, "request \(i) (seed \(seed)) \(r): \(error); the simulator no longer answers")
                throw error
            }
            statuses[answer.status, default: 0] += 1
            XCTAssertTrue((200..<600).contains(answer.status), "request \(i) \(r): status \(answer.status)")
            // Where Nightscout answers text, so does the simulator: `status.txt`, CSV/TSV reads, and
            // a failed Loop notification (`res.status(500).send(error)` in notifications-v2.js).
            if answer.header("content-type")?.contains("json") != true {
                let textRoute = ["notifications/loop", ".txt", ".csv", ".tsv"].contains { r.path.contains($0) }
                XCTAssertTrue(textRoute || answer.body.isEmpty, "request \(i) \(r): \(answer.status) not JSON: \(answer.text.prefix(300))")
            } else if answer.status >= 400 {
                let status = answer.json?["status"]?.int64Value
                XCTAssertEqual(status, Int64(answer.status), "request \(i) \(r): \(answer.status) \(answer.text.prefix(300))")
            } else if answer.status != 204 && answer.status != 304 {
                XCTAssertNotNil(answer.json, "request \(i) \(r): \(answer.status) not JSON: \(answer.text.prefix(300))")
            }
            if i % 100 == 99 {
                let alive = try await h.request(.GET, "/api/v3/version")
                XCTAssertEqual(alive.status, 200)
            }
        }
        let alive = try await h.request(.GET, "/api/v3/version")
        XCTAssertEqual(alive.status, 200)
        let summary = statuses.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        print("generated requests: \(count) (seed \(seed)) in \(Int(Date().timeIntervalSince(started))) s; statuses \(summary)")
        await h.stop()
    }

    /// The inputs the issue names answer as Nightscout does: a POST whose date is outside
    /// Int64 ms (`validateCommon`: a number above MIN_TIMESTAMP passes, `parseToMoment` leaves it
    /// alone), dates below MIN_TIMESTAMP are 400, history since a value outside a JS date is 400.
    func testDatesOutsideInt64AnswerAsNightscout() async throws {
        let h = SimHarness()
        try await h.start()
        let admin = try await h.bearer("edge-admin", roles: ["admin"])
        func post(_ col: String, _ body: String) async throws -> HTTPResult {
            try await h.request(.POST, "/api/v3/\(col)", headers: admin, rawBody: body)
        }
        let big = try await post("treatments", #"{"date": 1e19, "utcOffset": 0, "app": "t", "eventType": "Note"}"#)
        XCTAssertEqual(big.status, 201, big.text)
        let noOffset = try await post("treatments", #"{"date": 1e19, "app": "t", "eventType": "Note"}"#)
        XCTAssertEqual(noOffset.json, ["status": 400, "message": "Bad or missing utcOffset field"])
        for date in ["-1e19", "-11958188485021344", "\"1e300\"", "946684800000", "5"] {
            let r = try await post("devicestatus", #"{"date": \#(date), "utcOffset": 0, "app": "t", "device": "d"}"#)
            XCTAssertEqual(r.json, ["status": 400, "message": "Bad or missing date field"], date)
        }
        // Beyond Double's range the simulator's parser refuses the body, as a malformed one (500);
        // Nightscout's JSON.parse would read ±Infinity (a known difference).
        let inf = try await post("devicestatus", #"{"date": 1e999, "utcOffset": 0, "app": "t", "device": "d"}"#)
        XCTAssertEqual(inf.json, ["status": 500, "message": "Internal Server Error"])
        let put = try await h.request(
            .PUT, "/api/v3/devicestatus/edge-1", headers: admin, rawBody: #"{"date": -1e19, "utcOffset": 0, "app": "t"}"#)
        XCTAssertEqual(put.json, ["status": 400, "message": "Bad or missing date field"])
        let patch = try await h.request(
            .PATCH, "/api/v3/treatments/\(big.json?["identifier"]?.stringValue ?? "")", headers: admin,
            rawBody: #"{"date": 1e300}"#)
        XCTAssertEqual(patch.status, 400)
        for since in ["1e300", "-9223372036854775808", "9223372036854775808", "-1e19", "8640000000000001"] {
            let r = try await h.request(.GET, "/api/v3/devicestatus/history/\(since)", headers: admin)
            XCTAssertEqual(r.json, ["status": 400, "message": "Bad or missing Last-Modified header/parameter"], since)
        }
        let search = try await h.request(.GET, "/api/v3/treatments?date$gt=1e300&limit=5", headers: admin)
        XCTAssertEqual(search.status, 200, search.text)
        let unauth = try await h.request(.POST, "/api/v3/treatments", rawBody: #"{"date": 1e19}"#)
        XCTAssertEqual(unauth.status, 401)
        // v1 writes with the same dates are stored (v1 does not validate), and read back.
        for date in ["1e19", "-1e19", "-11958188485021344", "9223372036854775808"] {
            let r = try await h.request(
                .POST, "/api/v1/treatments", headers: h.secretHeader,
                rawBody: #"{"eventType": "Note", "created_at": \#(date), "date": \#(date), "preBolus": \#(date), "carbs": 5}"#)
            XCTAssertEqual(r.status, 200, "\(date): \(r.text)")
            let e = try await h.request(
                .POST, "/api/v1/entries", headers: h.secretHeader, rawBody: #"[{"type": "sgv", "sgv": 100, "date": \#(date)}]"#)
            XCTAssertEqual(e.status, 200, "\(date): \(e.text)")
        }
        let read = try await h.request(.GET, "/api/v1/treatments.json?count=100", headers: h.secretHeader)
        XCTAssertEqual(read.status, 200)
        let alive = try await h.request(.GET, "/api/v3/version")
        XCTAssertEqual(alive.status, 200)
        await h.stop()
    }
}

/// One generated request.
struct GeneratedRequest: CustomStringConvertible {
    var method: HTTPMethod
    var path: String
    var headers: [(String, String)]
    var body: String?
    var description: String {
        "\(method) \(path.prefix(200)) headers \(headers.map { "\($0.0): \($0.1.prefix(40))" }) body \(body.map { String($0.prefix(200)) } ?? "none")"
    }
}

/// Makes requests from a seed: every route, with edge values everywhere.
struct RequestGenerator {
    var rng: SeededRandom
    let admin: [(String, String)]
    let token: String

    init(seed: UInt64, admin: [(String, String)], token: String) {
        rng = SeededRandom(seed: seed)
        self.admin = admin
        self.token = token
    }

    static let edgeNumbers = [
        "0", "-0", "1", "-1", "0.5", "-0.5", "1e19", "-1e19", "1e300", "-1e300", "1e999", "-1e999", "1E400",
        "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
        "18446744073709551616", "-11958188485021344", "8640000000000000", "8640000000000001", "-8640000000000001",
        "946684800000", "946684799999", "4294967296", "1e21", "1e22", "9007199254740993", "1.7976931348623157e308",
        "5e-324", "1714557600000", "1714557600", "-1440", "1441", "2147483648", "123456789012345678901234567890",
    ]
    static let edgeStrings = [
        "", " ", "null", "NaN", "Infinity", "-Infinity", "1e300", "-9223372036854775808", "2024-05-01T10:00:00Z",
        "+275760-09-13T00:00:00Z", "-271821-04-20T00:00:00Z", "9999-12-31T23:59:59.999+14:00", "2024-02-30",
        "Wed, 01 May 2024 10:00:00 GMT", "Thu, 01 Jan 1970 00:00:00 GMT", "Sat, 01 Jan 10000 00:00:00 GMT",
        "0x10", "1e19", "'quoted'", "a|b|c", "%00", "\u{0}", "💉", "$where", "../../etc", "history",
    ]
    static let fields = [
        "date", "created_at", "dateString", "sysTime", "mills", "srvModified", "srvCreated", "utcOffset", "sgv", "mbg",
        "glucose", "units", "carbs", "insulin", "duration", "durationInMilliseconds", "endmills", "preBolus",
        "percent", "absolute", "relative", "targetTop", "targetBottom", "identifier", "_id", "app", "device",
        "eventType", "eventTime", "type", "notes", "enteredBy", "isValid", "direction", "trend", "delta",
        "defaultProfile", "store", "startDate", "remoteBolus", "remoteCarbs", "otp", "reason", "secret", "token",
        "name", "roles", "permissions", "status", "timestamp", "override", "amount",
    ]
    static let collections = ["entries", "treatments", "devicestatus", "food", "profile", "settings", "nope", "entries.json"]

    mutating func int(_ n: Int) -> Int { Int(rng.next() % UInt64(max(n, 1))) }
    mutating func chance(_ p: Double) -> Bool { rng.unit() < p }
    mutating func pick<T>(_ a: [T]) -> T { a[int(a.count)] }

    mutating func number() -> String {
        switch int(4) {
        case 0: return String(Int64(bitPattern: rng.next()))
        case 1: return String(rng.unit() * pow(10, Double(int(40)) - 10))
        default: return pick(Self.edgeNumbers)
        }
    }

    mutating func string() -> String {
        switch int(10) {
        case 0: return String(repeating: "x", count: 1 + int(300_000))
        case 1: return String(repeating: "\u{00e9}\u{2603}", count: 1 + int(1000))
        default: return chance(0.5) ? pick(Self.edgeStrings) : number()
        }
    }

    static func quoted(_ s: String) -> String { JSONValue.string(s).jsonString }

    mutating func value(depth: Int) -> String {
        switch int(depth > 3 ? 6 : 9) {
        case 0, 1: return number()
        case 2, 3: return Self.quoted(string())
        case 4: return pick(["true", "false", "null"])
        case 5: return Self.quoted(number())
        case 6: return "[" + (0..<int(4)).map { _ in value(depth: depth + 1) }.joined(separator: ",") + "]"
        case 7: return object(depth: depth + 1)
        default:
            let levels = pick([10, 100, 600, 5000])
            return String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
        }
    }

    mutating func object(depth: Int) -> String {
        let n = int(8)
        let pairs = (0..<n).map { _ -> String in
            let key = chance(0.9) ? pick(Self.fields) : string()
            return Self.quoted(key) + ":" + value(depth: depth)
        }
        return "{" + pairs.joined(separator: ",") + "}"
    }

    mutating func body() -> String? {
        switch int(12) {
        case 0: return nil
        case 1: return pick(["", "{", "[1,", "null", "1e999", "\"x\"", "[]", "{}", "{\"a\":1}garbage"])
        case 2, 3: return "[" + (0..<(1 + int(4))).map { _ in object(depth: 0) }.joined(separator: ",") + "]"
        default: return object(depth: 0)
        }
    }

    mutating func segment() -> String {
        let raw = chance(0.5) ? pick(Self.edgeNumbers) : pick(Self.edgeStrings + ["e1", "history", "current", "sgv", "5f0000000000000000000000"])
        return raw.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._"))) ?? "x"
    }

    mutating func path() -> String {
        let col = pick(Self.collections)
        let v1 = pick(["/api/v1", "/api/v2"])
        let ext = pick(["", ".json", ".csv", ".txt"])
        let v1Col = pick(["entries", "treatments", "devicestatus", "food", "profile", "profiles"])
        let options: [String] = [
            "\(v1)/\(v1Col)\(ext)", "\(v1)/\(v1Col)\(ext)/\(segment())", "\(v1)/\(v1Col)/\(segment())/\(segment())",
            "\(v1)/verifyauth", "\(v1)/status\(ext)", "\(v1)/experiments/test", "\(v1)/\(segment())",
            "/api/v2/authorization/request/\(pick([token, segment()]))", "/api/v2/authorization/subjects",
            "/api/v2/authorization/roles", "/api/v2/authorization/subjects/\(segment())", "/api/v2/notifications/loop",
            "/api/v2/remotecommands", "/api/v2/remotecommands/\(segment())", "/api/versions", "/api/v3/version",
            "/api/v3/status", "/api/v3/lastModified", "/api/v3/\(col)", "/api/v3/\(col)/history",
            "/api/v3/\(col)/history/\(segment())", "/api/v3/\(col)/\(segment())", "/api/v3/\(segment())",
        ]
        return pick(options)
    }

    mutating func query() -> String {
        let keys = [
            "count", "find[date][$gte]", "find[date][$lte]", "find[sgv][$lt]", "find[created_at][$gte]",
            "find[_id]", "find[eventType]", "limit", "skip", "sort", "sort$desc", "fields", "date$gt", "date$lte",
            "srvModified$gte", "created_at$lt", "sgv$in", "type", "now", "token", "secret", "since", "state",
            "permanent", "identifier$eq", "date$re", "x$bad",
        ]
        let n = int(5)
        guard n > 0 else { return "" }
        let parts = (0..<n).map { _ -> String in
            let k = pick(keys)
            let v = k == "token" ? pick([token, string()]) : chance(0.6) ? number() : string()
            let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
            return (k.addingPercentEncoding(withAllowedCharacters: allowed) ?? k) + "="
                + (String(v.prefix(5000)).addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        }
        return "?" + parts.joined(separator: "&")
    }

    mutating func headers() -> [(String, String)] {
        var h: [(String, String)] = []
        switch int(6) {
        case 0, 1: h += admin
        case 2: h.append(("api-secret", SimHarness.secretHash))
        case 3: h.append(("api-secret", pick([SimHarness.secret, "wrong", token, String(repeating: "a", count: 40)])))
        case 4: h.append(("Authorization", pick(["Bearer", "Bearer a.b.c", "Basic x", "Bearer " + token])))
        default: break
        }
        for name in ["Last-Modified", "If-Modified-Since", "If-Unmodified-Since", "Accept"] where chance(0.15) {
            let v = name == "Accept" ? pick(["text/csv", "application/json", "*/*", "x"]) : chance(0.5) ? pick(Self.edgeStrings) : number()
            // Header values cannot carry control characters or be huge.
            h.append((name, String(v.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7f }.prefix(200).map(Character.init))))
        }
        return h
    }

    mutating func next() -> GeneratedRequest {
        let method = pick([HTTPMethod.GET, .GET, .POST, .POST, .PUT, .PATCH, .DELETE])
        let path = self.path() + query()
        let headers = self.headers()
        let body = method == .GET || method == .DELETE ? (chance(0.1) ? self.body() : nil) : self.body()
        return GeneratedRequest(method: method, path: path, headers: headers, body: body)
    }
}
