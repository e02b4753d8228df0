import Foundation
import GarminKit
import Lua
import LookoutWire

/// The methods of a garmin client object.
extension GarminAccount {
    static var methods: [String: LuaBinding] {
        [
            "profile": { call in try fetch(call, "profile") { _ in .profile } },
            "daily_summary": { call in try fetch(call, "daily_summary") { c in .dailySummary(try date(c, 1)) } },
            "heart_rate": { call in try fetch(call, "heart_rate") { c in .heartRate(try date(c, 1)) } },
            "sleep": { call in try fetch(call, "sleep", noData: sleepless) { c in .sleep(try date(c, 1)) } },
            "stress": { call in try fetch(call, "stress") { c in .stress(try date(c, 1)) } },
            "body_battery": { call in try fetch(call, "body_battery") { c in .bodyBattery(try date(c, 1)) } },
            "hrv": { call in try fetch(call, "hrv") { c in .hrv(try date(c, 1)) } },
            "weight": { call in try fetch(call, "weight") { c in .weight(try date(c, 1)) } },
            "steps": { call in
                try fetch(call, "steps") { call in
                    let start = try date(call, 1)
                    let end = call.isNil(2) ? start : try date(call, 2)
                    guard start.days(to: end) >= 0 else { throw call.argumentError(2, "end date is before the start date") }
                    guard start.days(to: end) < 28 else { throw call.argumentError(2, "at most 28 days per call") }
                    return .steps(from: start, to: end)
                }
            },
            "activities": { call in try fetch(call, "activities") { try activitiesEndpoint($0) } },
            "get": { call in try get(call) },
            "status": { call in try status(call) },
            "refresh": { call in
                let client = try account(call).client
                return try wait(call, "garmin refresh", { try await client.refresh().expiresAt }) { stack, expiresAt in
                    stack.push(Int64(expiresAt))
                    return 1
                }
            },
            "_login_start": { call in try loginStart(call) },
            "_login_finish": { call in try loginFinish(call) },
        ]
    }

    /// Argument `n` as a date: `"YYYY-MM-DD"`, or nil for today (local calendar).
    static func date(_ call: LuaCall, _ n: Int) throws(LuaRaise) -> GarminDate {
        if call.isNil(n) { return today() }
        let text = try call.string(n)
        do { return try GarminDate(text) } catch { throw call.argumentError(n, "expected a date \"YYYY-MM-DD\", got \(String(reflecting: text))") }
    }

    static func today() -> GarminDate {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = .current
        let c = cal.dateComponents([.year, .month, .day], from: Date())
        return (try? GarminDate(String(format: "%04d-%02d-%02d", c.year ?? 1970, c.month ?? 1, c.day ?? 1))) ?? GarminDate(Date())
    }

    /// `me:activities{limit=20, start=0}`.
    static func activitiesEndpoint(_ call: LuaCall) throws(LuaRaise) -> GarminEndpoint {
        let opts = try call.options(1)
        if let unknown = opts.keys.sorted().first(where: { $0 != "limit" && $0 != "start" }) {
            throw call.argumentError(1, "unknown option '\(unknown)' (known: limit, start)")
        }
        func int(_ key: String, _ def: Int, _ range: ClosedRange<Int>) throws(LuaRaise) -> Int {
            guard let v = opts[key] else { return def }
            let bounds = LuaRange.count(Int64(range.lowerBound), Int64(range.upperBound))
            return Int(try call.integer(v, argument: 1, what: "opts.\(key)", in: bounds))
        }
        return .activities(limit: try int("limit", 20, 1...1000), start: try int("start", 0, 0...1_000_000))
    }

    /// Fetches an endpoint and pushes its JSON (nil when there is no data).
    /// `noData` tells a body that means "no data" (pushed as nil).
    static func fetch(
        _ call: LuaCall, _ what: String, noData: @escaping @Sendable (Data) -> Bool = { _ in false },
        _ endpoint: (LuaCall) throws -> GarminEndpoint
    ) throws -> LuaReturn {
        let client = try account(call).client
        let e = try endpoint(call)
        let engine = call.engine
        return try wait(call, "garmin \(what)", {
            let body = try await client.request("GET", e.path, query: e.queryItems).body
            return noData(body) ? Data() : body
        }) { stack, body in pushJSON(body, stack: stack, engine: engine) }
    }

    /// Sleep data whose `dailySleepDTO.id` is null is no data (spec §12).
    @Sendable static func sleepless(_ body: Data) -> Bool {
        guard let json = try? JSONValue.parse(body) else { return false }
        return json["dailySleepDTO"]?["id"] == nil || json["dailySleepDTO"]?["id"] == .null
    }

    /// `me:get(path [, params])`: any Connect API GET; params values are strings, numbers or
    /// booleans, or lists of them (repeated keys).
    static func get(_ call: LuaCall) throws -> LuaReturn {
        let client = try account(call).client
        let path = try call.string(1)
        guard path.hasPrefix("/") else { throw call.argumentError(1, "path must start with '/'") }
        var query: [(String, String)] = []
        for (key, value) in try call.options(2, name: "params").sorted(by: { $0.key < $1.key }) {
            func text(_ v: LuaValue) throws(LuaRaise) -> String {
                switch v {
                case .string(let s): return s.text ?? ""
                case .int(let i): return String(i)
                case .double(let d): return d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : String(d)
                case .bool(let b): return b ? "true" : "false"
                default: throw call.argumentError(2, "params.\(key): expected a string, number, boolean or a list of them")
                }
            }
            if case .array(let list) = value {
                for item in list { query.append((key, try text(item))) }
            } else {
                query.append((key, try text(value)))
            }
        }
        let engine = call.engine
        let items = query
        return try wait(call, "garmin get", { try await client.request("GET", path, query: items).body }) { stack, body in
            pushJSON(body, stack: stack, engine: engine)
        }
    }

    /// `me:status()`: `{logged_in, mfa, domain, expires_at, needs_refresh}` (never a token).
    public static func status(_ call: LuaCall) throws -> LuaReturn {
        let client = try account(call).client
        return try wait(call, "garmin status", { await client.status() }) { stack, s in
            var fields: [String: LuaValue] = [
                "logged_in": .bool(s.loggedIn), "mfa": .bool(s.mfa), "needs_refresh": .bool(s.needsRefresh),
            ]
            if let d = s.domain { fields["domain"] = .text(d) }
            if let e = s.oauth2ExpiresAt { fields["expires_at"] = .int(Int64(e.timeIntervalSince1970)) }
            stack.push(LuaValue.object(fields))
            return 1
        }
    }

    /// First half of `login`: `true`, a pending MFA object (when the script has a handler), or
    /// `nil, err` (`mfa_required` without a handler).
    static func loginStart(_ call: LuaCall) throws -> LuaReturn {
        let me = try account(call)
        let hasHandler = try call.boolean(1)
        guard let email = me.connection.email else {
            return call.failure(
                LuaErrorInfo(code: "config", message: "[garmin.\(me.connection.label)] has no email to log in with", service: "garmin"))
        }
        let password: String
        do {
            guard let p = try me.connection.password() else {
                return call.failure(
                    LuaErrorInfo(
                        code: "config", message: "[garmin.\(me.connection.label)] has no password_env or password_file", service: "garmin"))
            }
            password = p
        } catch {
            return call.failure(LuaErrorInfo(code: "config", message: "\(error)", service: "garmin"))
        }
        let client = me.client
        let engine = call.engine
        return try wait(call, "garmin login", {
            switch try await client.login(email: email, password: password) {
            case .success: return GarminLoginStep.done
            case .needsMFA(let state):
                guard hasHandler else { throw GarminError.mfaRequired }
                return GarminLoginStep.mfa(state)
            }
        }) { stack, step in
            switch step {
            case .done: stack.push(true)
            case .mfa(let state): engine.push(object: GarminPendingMFA(state: state), type: GarminPendingMFA.type, on: stack)
            }
            return 1
        }
    }

    /// Second half of `login`: sends the code.
    static func loginFinish(_ call: LuaCall) throws -> LuaReturn {
        let client = try account(call).client
        let pending = try call.object(1, as: GarminPendingMFA.self, type: GarminPendingMFA.type)
        let code = try call.string(2)
        let state = pending.state
        return try wait(call, "garmin login", { try await client.resumeLogin(state, code: code) }) { stack, _ in
            stack.push(true)
            return 1
        }
    }
}

/// Where the first half of a login ended.
enum GarminLoginStep: Sendable {
    case done
    case mfa(GarminMFAState)
}
