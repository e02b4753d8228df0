import Foundation
import LookoutWire

/// The Connect API endpoints of §12 with deterministic generated data. Requests need
/// `Authorization: Bearer <valid access token>` (401 otherwise). Dates after the clock's date
/// have no data (null, 204 or empty lists, as the real endpoints answer).
enum GarminSimConnect {
    static func handle(_ req: SimRequest, sim: GarminSimulator) async -> SimResponse {
        await sim.state.countAPI()
        let now = sim.options.clock()
        guard let h = req.header("authorization"), h.hasPrefix("Bearer "),
            let email = await sim.state.account(access: String(h.dropFirst(7)), now: now)
        else { return .json(401, ["message": "Unauthorized"]) }
        let s = req.segments
        let today = GarminSimData.day(now)
        func date(_ text: String?) -> String? {
            guard let t = text, GarminSimData.parse(t) != nil else { return nil }
            return t
        }
        func future(_ d: String) -> Bool { d > today }
        let bad = SimResponse.json(400, ["message": "invalid or missing date"])
        switch (req.method, s.first ?? "") {
        case ("GET", "userprofile-service"):
            if s == ["userprofile-service", "socialProfile"] { return .json(200, GarminSimData.profile(email)) }
            if s == ["userprofile-service", "userprofile", "user-settings"] { return .json(200, GarminSimData.settings(email)) }
        case ("GET", "usersummary-service"):
            if s == ["usersummary-service", "usersummary", "daily"] {
                guard let d = date(req.queryValue("calendarDate")) else { return bad }
                return .json(200, future(d) ? ["calendarDate": .string(d)] : GarminSimData.summary(d))
            }
            if s.count == 6, Array(s[0..<4]) == ["usersummary-service", "stats", "steps", "daily"] {
                guard let a = date(s[4]), let b = date(s[5]), a <= b else { return bad }
                let days = GarminSimData.days(from: a, to: b)
                guard days.count <= 28 else { return .json(400, ["message": "date range exceeds 28 days"]) }
                return .json(200, .array(days.filter { !future($0) }.map(GarminSimData.steps)))
            }
        case ("GET", "wellness-service"):
            if s == ["wellness-service", "wellness", "dailyHeartRate"] {
                guard let d = date(req.queryValue("date")) else { return bad }
                return .json(200, GarminSimData.heartRate(d, empty: future(d)))
            }
            if s.count == 4, s[0...2] == ["wellness-service", "wellness", "dailyStress"] {
                guard let d = date(s[3]) else { return bad }
                return .json(200, future(d) ? .null : GarminSimData.stress(d))
            }
            if s.count == 5, s[0...3] == ["wellness-service", "wellness", "bodyBattery", "events"] {
                guard let d = date(s[4]) else { return bad }
                return .json(200, future(d) ? .array([]) : GarminSimData.bodyBatteryEvents(d))
            }
        case ("GET", "sleep-service"):
            if s == ["sleep-service", "sleep", "dailySleepData"] {
                guard let d = date(req.queryValue("date")) else { return bad }
                return .json(200, GarminSimData.sleep(d, empty: future(d)))
            }
        case ("GET", "hrv-service"):
            if s.count == 3, s[1] == "hrv" {
                guard let d = date(s[2]) else { return bad }
                return future(d) ? .empty(204) : .json(200, GarminSimData.hrv(d))
            }
        case ("GET", "weight-service"):
            if s.count == 4, s[1...2] == ["weight", "dayview"] {
                guard let d = date(s[3]) else { return bad }
                return .json(200, GarminSimData.weight(d, empty: future(d)))
            }
        case ("GET", "activitylist-service"):
            if s == ["activitylist-service", "activities", "search", "activities"] {
                let limit = Int(req.queryValue("limit") ?? "20") ?? -1, start = Int(req.queryValue("start") ?? "0") ?? -1
                guard limit >= 0, start >= 0 else { return .json(400, ["message": "limit and start must be integers"]) }
                let deleted = await sim.state.deletedActivities
                let edits = await sim.state.activityEdits
                let all = GarminSimData.activities(today: today).filter { !deleted.contains($0.0) }
                let page = all.dropFirst(start).prefix(limit).map { merge($0.1, edits[$0.0]) }
                return .json(200, .array(Array(page)))
            }
        case (_, "activity-service"):
            if s.count == 3, s[1] == "activity", let id = Int64(s[2]) { return await activity(req, id: id, today: today, sim: sim) }
        default: break
        }
        return .json(404, ["message": .string("Not Found: \(req.method) \(req.path)")])
    }

    static func merge(_ v: JSONValue, _ edits: [String: JSONValue]?) -> JSONValue {
        guard var o = v.objectValue, let edits else { return v }
        for (k, x) in edits { o[k] = x }
        return .object(o)
    }

    static func activity(_ req: SimRequest, id: Int64, today: String, sim: GarminSimulator) async -> SimResponse {
        let deleted = await sim.state.deletedActivities
        guard !deleted.contains(id), let a = GarminSimData.activities(today: today).first(where: { $0.0 == id })?.1 else {
            return .json(404, ["message": "Activity not found"])
        }
        switch req.method {
        case "GET": return .json(200, merge(a, await sim.state.activityEdits[id]))
        case "DELETE":
            await sim.state.deleteActivity(id)
            return .empty(204)
        case "PUT":
            guard let o = req.json?.objectValue, o["activityId"]?.int64Value == id else {
                return .json(400, ["message": "JSON body with the matching activityId required"])
            }
            var edit: [String: JSONValue] = [:]
            for k in ["activityName", "description"] { if let v = o[k] { edit[k] = v } }
            await sim.state.editActivity(id, edit)
            return .empty(204)
        default: return .json(405, ["message": "Method Not Allowed"])
        }
    }
}

extension GarminSimState {
    func deleteActivity(_ id: Int64) { deletedActivities.insert(id) }
    func editActivity(_ id: Int64, _ edit: [String: JSONValue]) {
        activityEdits[id, default: [:]].merge(edit) { _, b in b }
    }
}
