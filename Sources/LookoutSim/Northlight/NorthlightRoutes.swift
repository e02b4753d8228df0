import Foundation
import Hummingbird
import LookoutWire

/// Every route of the Northlight simulator, in one place. In front of them: the 1 MiB body limit,
/// the request record, then for `/api/v1/…` the API key, rate limit and `X-Platform` checks and
/// injected failures (`NorthlightAPI.gate`), then the API's own 404 for what no route matches.
enum NorthlightRoutes {
    /// The largest request body read.
    static let bodyLimit = 1024 * 1024

    /// The simulator's router.
    static func router(_ sim: NorthlightSimulator) -> Router<SimRequestContext> {
        let router = Router(context: SimRequestContext.self)
        router.add(middleware: BodyLimitMiddleware(
            limit: bodyLimit, tooLarge: NorthlightAPI.failure(413, "payload_too_large", "body over 1 MiB")))
        router.add(middleware: RequestLogMiddleware(bodyLimit: bodyLimit) { logged in
            let target = logged.path + (logged.query.map { "?" + $0 } ?? "")
            await sim.state.record(
                .init(method: logged.method, target: target, headers: logged.headers, body: logged.body, status: logged.status))
        })
        router.add(middleware: NorthlightGateMiddleware(sim: sim))
        router.add(middleware: FaultMiddleware { path in
            guard NorthlightAPI.isAPI(SimRequest.segments(path)), let fault = await sim.state.nextFailure() else { return .init() }
            return .init(response: NorthlightAPI.failure(fault.status, "server_error", "injected failure", headers: fault.headers))
        })
        router.add(middleware: SimNotFoundMiddleware(bodyLimit: bodyLimit) { req in
            NorthlightAPI.isAPI(req.segments)
                ? NorthlightAPI.failure(404, "not_found", "no route \(req.method) \(req.path)")
                : NorthlightAPI.failure(404, "not_found", "no route \(req.path)")
        })
        let routes = SimRoutes(router: router, bodyLimit: bodyLimit)
        routes.on("/api/v1/feedback", [.post]) { req in await NorthlightAPI.submit(req, key: key(req), bug: false, sim: sim) }
        routes.on("/api/v1/bugs", [.post]) { req in await NorthlightAPI.submit(req, key: key(req), bug: true, sim: sim) }
        routes.on("/api/v1/feedback/{id}/vote", [.post]) { req in
            await NorthlightAPI.vote(req, key: key(req), id: req.parameters["id"] ?? "", sim: sim)
        }
        routes.get("/api/v1/feedback") { req in await NorthlightAPI.board(req, key: key(req), sim: sim) }
        routes.get("/api/v1/roadmap") { req in await NorthlightAPI.roadmap(key: key(req), sim: sim) }
        return router
    }

    /// The API key (the gate let the request through, so it is a project's).
    static func key(_ req: SimRequest) -> String { req.header("x-api-key") ?? "" }
}

/// Runs `NorthlightAPI.gate` on every `/api/v1/…` request, matched or not.
struct NorthlightGateMiddleware: RouterMiddleware {
    typealias Context = SimRequestContext
    let sim: NorthlightSimulator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let req = try await SimRequest.collect(request, context: context, limit: NorthlightRoutes.bodyLimit)
        if NorthlightAPI.isAPI(req.segments), let refused = await NorthlightAPI.gate(req, sim: sim) {
            return refused.httpResponse
        }
        return try await next(request, context)
    }
}

/// The routes of `/api/v1`.
enum NorthlightAPI {
    static let statuses: Set<String> = ["suggested", "approved", "planned", "in_progress", "completed", "declined"]
    static let severities: Set<String> = ["low", "medium", "high", "critical"]

    static func failure(_ status: Int, _ code: String, _ message: String, field: String? = nil,
                        headers: [(String, String)] = []) -> SimResponse {
        var o: [String: JSONValue] = ["success": false, "error": .string(code), "message": .string(message)]
        if let field { o["field"] = .string(field) }
        return .json(status, .object(o), headers: headers)
    }

    static func invalid(_ field: String, _ message: String) -> SimResponse { failure(400, "invalid_input", message, field: field) }

    /// Whether a path is under the API (`/api/v1/<something>`).
    static func isAPI(_ s: [String]) -> Bool { s.count >= 3 && s[0] == "api" && s[1] == "v1" }

    /// The checks every API request passes first: a known `X-API-Key` (401), the rate limit (429),
    /// `X-Platform` (400). Nil when the request may go on.
    static func gate(_ req: SimRequest, sim: NorthlightSimulator) async -> SimResponse? {
        guard let key = req.header("x-api-key"), await sim.state.projects[key] != nil else {
            return failure(401, "invalid_api_key", "missing or unknown X-API-Key")
        }
        if let limited = await rateLimit(key, sim: sim) { return limited }
        guard let platform = req.header("x-platform"), !platform.isEmpty else { return invalid("X-Platform", "X-Platform header is required") }
        return nil
    }

    /// `GET /api/v1/roadmap`: the project's roadmap items by position.
    static func roadmap(key: String, sim: NorthlightSimulator) async -> SimResponse {
        let items = await sim.state.projects[key]?.roadmap ?? []
        return .json(200, ["roadmap_items": .array(items.sorted { ($0["position"]?.int64Value ?? 0) < ($1["position"]?.int64Value ?? 0) })])
    }

    /// Counts the request in its project's window; a 429 when over the tier's limit.
    static func rateLimit(_ key: String, sim: NorthlightSimulator) async -> SimResponse? {
        let now = sim.options.clock()
        let limits = sim.options.rateLimits
        let wait: Double? = await sim.state.with(key) { project -> Double? in
            if let start = project.windowStart, now.timeIntervalSince(start) < 60 {
                project.windowCount += 1
            } else {
                project.windowStart = now
                project.windowCount = 1
            }
            guard let limit = limits[project.tier], project.windowCount > limit else { return nil }
            return 60 - now.timeIntervalSince(project.windowStart ?? now)
        } ?? nil
        guard let wait else { return nil }
        let seconds = max(1, Int(wait.rounded(.up)))
        return failure(429, "rate_limit_exceeded", "rate limit exceeded; retry in \(seconds) s", headers: [("Retry-After", String(seconds))])
    }

    /// A string field: required (non-blank) or optional; nil answer when valid.
    static func text(_ body: [String: JSONValue], _ field: String, required: Bool, max: Int? = nil) -> (String?, SimResponse?) {
        guard let value = body[field], value != .null else {
            return (nil, required ? invalid(field, "\(field) is required") : nil)
        }
        guard let text = value.stringValue else { return (nil, invalid(field, "\(field) must be a string")) }
        if required, text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return (nil, invalid(field, "\(field) is required")) }
        if let max, text.count > max { return (nil, invalid(field, "\(field) must be at most \(max) characters")) }
        return (text, nil)
    }

    static func isEmail(_ s: String) -> Bool {
        let parts = s.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !s.contains(" ") else { return false }
        let domain = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return domain.count >= 2 && domain.allSatisfy { !$0.isEmpty } && (domain.last?.count ?? 0) >= 2
    }

    static func submit(_ req: SimRequest, key: String, bug: Bool, sim: NorthlightSimulator) async -> SimResponse {
        guard let json = req.json, case .object(let body) = json else { return invalid("body", "expected a JSON object") }
        let (title, e1) = text(body, "title", required: true, max: 255)
        if let e1 { return e1 }
        let (description, e2) = text(body, "description", required: true)
        if let e2 { return e2 }
        let (email, e3) = text(body, "user_email", required: false)
        if let e3 { return e3 }
        if let email, !isEmail(email) { return invalid("user_email", "user_email must be a valid email address") }
        if let info = body["device_info"], info != .null, info.objectValue == nil { return invalid("device_info", "device_info must be an object") }
        var record = body
        if bug {
            let (severity, e4) = text(body, "severity", required: false)
            if let e4 { return e4 }
            if let severity, !severities.contains(severity) { return invalid("severity", "severity must be low, medium, high or critical") }
            record["severity"] = .string(severity ?? "medium")
            if let e5 = text(body, "steps_to_reproduce", required: false).1 { return e5 }
        } else if let e6 = text(body, "category", required: false).1 {
            return e6
        }
        let id = UUID().uuidString.lowercased()
        let created = ISO8601DateFormatter().string(from: sim.options.clock())
        let itemLimit = sim.options.freeItemLimit
        let accepted = await sim.state.with(key) { project -> Bool in
            if project.tier == .free, project.submitted >= itemLimit { return false }
            project.submitted += 1
            if bug {
                record["id"] = .string(id)
                record["created_at"] = .string(created)
                project.bugs.append(.object(record))
            } else {
                project.feedback.append(NorthlightFeedbackRecord(
                    id: id, title: title ?? "", description: description ?? "", status: "suggested",
                    category: body["category"]?.stringValue, baseVotes: 0, createdAt: created, userEmail: email,
                    deviceInfo: body["device_info"]))
            }
            return true
        } ?? false
        guard accepted else { return failure(402, "feedback_limit_reached", "Free tier: \(itemLimit) items max") }
        return .json(201, ["success": true, bug ? "bug_id" : "feedback_id": .string(id)])
    }

    static func vote(_ req: SimRequest, key: String, id: String, sim: NorthlightSimulator) async -> SimResponse {
        guard let json = req.json, case .object(let body) = json else { return invalid("body", "expected a JSON object") }
        let (user, e) = text(body, "user_identifier", required: true, max: 255)
        if let e { return e }
        let count = await sim.state.with(key) { project -> Int? in
            guard let i = project.feedback.firstIndex(where: { $0.id == id }) else { return nil }
            project.feedback[i].voters.insert(user ?? "")
            return project.feedback[i].voteCount
        } ?? nil
        guard let count else { return failure(404, "not_found", "no feedback item \(id)") }
        return .json(200, ["success": true, "vote_count": .int(Int64(count))])
    }

    static func board(_ req: SimRequest, key: String, sim: NorthlightSimulator) async -> SimResponse {
        var wanted: Set<String>?
        if let filter = req.queryValue("status"), !filter.isEmpty {
            let names = filter.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if let unknown = names.first(where: { !statuses.contains($0) }) {
                return invalid("status", "unknown status \(unknown)")
            }
            wanted = Set(names)
        }
        let items = (await sim.state.projects[key]?.feedback ?? [])
            .filter { wanted?.contains($0.status) ?? true }
            .sorted { ($0.voteCount, $1.createdAt) > ($1.voteCount, $0.createdAt) }
        return .json(200, ["feedback": .array(items.map(\.publicJSON))])
    }
}
