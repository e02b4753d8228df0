import Foundation
import LookoutWire

/// The Connect API endpoints of §12 with deterministic generated data. Requests need
/// `Authorization: Bearer <valid access token>` (401 otherwise). Dates after the clock's date
/// have no data (null, 204 or empty lists, as the real endpoints answer).
enum GarminSimConnect {
    /// What a Connect handler gets: the request, the signed-in account and the clock's day.
    struct Call: Sendable {
        var req: SimRequest
        var sim: GarminSimulator
        var email: String
        var today: String
        /// `text` when it is a valid `YYYY-MM-DD` date.
        func date(_ text: String?) -> String? {
            guard let t = text, GarminSimData.parse(t) != nil else { return nil }
            return t
        }
        /// Whether `d` is after the clock's day (no data yet).
        func future(_ d: String) -> Bool { d > today }
        /// The route parameter `name`, if a valid date.
        func dateParameter(_ name: String) -> String? { date(req.parameters[name]) }
    }

    static let bad = SimResponse.json(400, ["message": "invalid or missing date"])

    /// Counts the call, then checks `Authorization: Bearer <valid access token>` (401 otherwise).
    static func authorize(_ req: SimRequest, sim: GarminSimulator) async -> Result<Call, SimResponse> {
        await sim.state.countAPI()
        let now = sim.options.clock()
        guard let h = req.header("authorization"), h.hasPrefix("Bearer "),
            let email = await sim.state.account(access: String(h.dropFirst(7)), now: now)
        else { return .failure(.json(401, ["message": "Unauthorized"])) }
        return .success(Call(req: req, sim: sim, email: email, today: GarminSimData.day(now)))
    }

    /// A path or method no route answers (after counting and the token check).
    static func unmatched(_ req: SimRequest, sim: GarminSimulator) async -> SimResponse {
        if case .failure(let denied) = await authorize(req, sim: sim) { return denied }
        return .json(404, ["message": .string("Not Found: \(req.method) \(req.path)")])
    }

    static func socialProfile(_ c: Call) -> SimResponse { .json(200, GarminSimData.profile(c.email)) }

    static func userSettings(_ c: Call) -> SimResponse { .json(200, GarminSimData.settings(c.email)) }

    static func dailySummary(_ c: Call) -> SimResponse {
        guard let d = c.date(c.req.queryValue("calendarDate")) else { return bad }
        return .json(200, c.future(d) ? ["calendarDate": .string(d)] : GarminSimData.summary(d))
    }

    static func dailySteps(_ c: Call) -> SimResponse {
        guard let a = c.dateParameter("start"), let b = c.dateParameter("end"), a <= b else { return bad }
        let days = GarminSimData.days(from: a, to: b)
        guard days.count <= 28 else { return .json(400, ["message": "date range exceeds 28 days"]) }
        return .json(200, .array(days.filter { !c.future($0) }.map(GarminSimData.steps)))
    }

    static func dailyHeartRate(_ c: Call) -> SimResponse {
        guard let d = c.date(c.req.queryValue("date")) else { return bad }
        return .json(200, GarminSimData.heartRate(d, empty: c.future(d)))
    }

    static func dailyStress(_ c: Call) -> SimResponse {
        guard let d = c.dateParameter("date") else { return bad }
        return .json(200, c.future(d) ? .null : GarminSimData.stress(d))
    }

    static func bodyBatteryEvents(_ c: Call) -> SimResponse {
        guard let d = c.dateParameter("date") else { return bad }
        return .json(200, c.future(d) ? .array([]) : GarminSimData.bodyBatteryEvents(d))
    }

    static func dailySleep(_ c: Call) -> SimResponse {
        guard let d = c.date(c.req.queryValue("date")) else { return bad }
        return .json(200, GarminSimData.sleep(d, empty: c.future(d)))
    }

    static func hrv(_ c: Call) -> SimResponse {
        guard let d = c.dateParameter("date") else { return bad }
        return c.future(d) ? .empty(204) : .json(200, GarminSimData.hrv(d))
    }

    static func weightDayView(_ c: Call) -> SimResponse {
        guard let d = c.dateParameter("date") else { return bad }
        return .json(200, GarminSimData.weight(d, empty: c.future(d)))
    }

    static func activities(_ c: Call) async -> SimResponse {
        let req = c.req, sim = c.sim
        let limit = Int(req.queryValue("limit") ?? "20") ?? -1, start = Int(req.queryValue("start") ?? "0") ?? -1
        guard limit >= 0, start >= 0 else { return .json(400, ["message": "limit and start must be integers"]) }
        let deleted = await sim.state.deletedActivities
        let edits = await sim.state.activityEdits
        let all = GarminSimData.activities(today: c.today).filter { !deleted.contains($0.0) }
        let page = all.dropFirst(start).prefix(limit).map { merge($0.1, edits[$0.0]) }
        return .json(200, .array(Array(page)))
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
