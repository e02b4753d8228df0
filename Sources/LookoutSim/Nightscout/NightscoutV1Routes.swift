import Foundation
import LookoutWire

/// API v1 and the v2 additions (§1.3, §2, §5.1). v1 writes never set `srvModified`.
enum NightscoutV1 {
    static let unauthorized = SimResponse.json(
        401, ["status": 401, "message": "Unauthorized", "description": "Invalid/Missing"])
    static let notFound = SimResponse.json(404, ["status": 404, "message": "Not Found"])

    struct Ctx: Sendable {
        var req: SimRequest
        var sim: NightscoutSimulator
        var auth: NSAuthResult
        var now: Int64
        /// JSON body with `secret`/`token` removed.
        var body: JSONValue?
        func can(_ p: String) -> Bool { NSPermission.permitted(auth.permissions, p) }
        var writesEnabled: Bool { sim.options.apiSecret != nil }
    }

    static func stripExt(_ s: String) -> String {
        for e in [".json", ".csv", ".tsv", ".txt"] where s.hasSuffix(e) { return String(s.dropLast(e.count)) }
        return s
    }

    /// `GET /api/v2/authorization/request/{token}`: exchanges an access token for a JWT (before
    /// any other credential check).
    static func authorizationRequest(_ req: SimRequest, sim: NightscoutSimulator) async -> SimResponse {
        let now = NSDates.ms(sim.options.clock())
        guard let r = await sim.auth.exchange(req.parameters["token"] ?? "", client: req.client, nowSec: now / 1000)
        else { return unauthorized }
        return .json(200, r)
    }

    /// Resolves the credentials of a v1/v2 request (§1.1, §1.2, §1.4), with `secret`/`token`
    /// removed from the body. Every v1 route, and a v1 path no route matches, does this first.
    static func context(_ req: SimRequest, sim: NightscoutSimulator) async -> Ctx {
        let now = NSDates.ms(sim.options.clock())
        var body = req.json
        var creds = NSCredentials()
        creds.apiSecretHeader = req.header("api-secret")
        creds.secretQuery = req.queryValue("secret")
        creds.tokenQuery = req.queryValue("token")
        if let a = req.header("authorization"), a.hasPrefix("Bearer ") { creds.bearer = String(a.dropFirst(7)) }
        func strip(_ o: inout [String: JSONValue]) {
            creds.bodySecret = o.removeValue(forKey: "secret")?.stringValue ?? creds.bodySecret
            creds.bodyToken = o.removeValue(forKey: "token")?.stringValue ?? creds.bodyToken
        }
        if case .object(var o)? = body {
            strip(&o)
            body = .object(o)
        } else if case .array(var a)? = body, case .object(var o)? = a.first {
            strip(&o)
            a[0] = .object(o)
            body = .array(a)
        }
        let auth = await sim.auth.resolveV1(creds, client: req.client, nowSec: now / 1000)
        return Ctx(req: req, sim: sim, auth: auth, now: now, body: body)
    }

    /// A v1/v2 path or method no route answers: 404 after the credential check.
    static func unmatched(_ req: SimRequest, sim: NightscoutSimulator) async -> SimResponse {
        _ = await context(req, sim: sim)
        return notFound
    }

    // MARK: auth & status

    /// `verifyauth` (any method): what the credentials may do.
    static func verifyAuth(_ ctx: Ctx) -> SimResponse {
        let a = ctx.auth
        let canRead = NSPermission.permitted(a.permissions, "*:*:read")
        let canWrite = NSPermission.permitted(a.permissions, "*:*:create")
        let isAdmin = NSPermission.permitted(a.permissions, "*")
        let fellBack = a.noCredentials || a.failed
        let msg: [String: JSONValue] = [
            "canRead": .bool(canRead), "canWrite": .bool(canWrite), "isAdmin": .bool(isAdmin),
            "message": .string(canRead && !fellBack ? "OK" : "UNAUTHORIZED"),
            "rolefound": .string(a.subject != nil ? "FOUND" : "NOTFOUND"),
            "permissions": .string(a.noCredentials ? "DEFAULT" : "ROLE"),
        ]
        return .json(200, ["status": 200, "message": .object(msg)])
    }

    /// `status` (any method): the status document, or `STATUS OK` for `status.txt`.
    static func status(_ ctx: Ctx) async -> SimResponse {
        guard ctx.can("api:status:read") else { return unauthorized }
        if ctx.req.segments[2] == "status.txt" { return .text(200, "STATUS OK") }
        var authorized: JSONValue = .null
        if let t = ctx.req.queryValue("token"),
            let r = await ctx.sim.auth.exchange(t, client: ctx.req.client, nowSec: ctx.now / 1000)
        {
            authorized = r
        }
        return status(ctx, authorized: authorized)
    }

    /// `experiments/test` (any method): whether the credentials may debug.
    static func experimentsTest(_ ctx: Ctx) -> SimResponse {
        guard ctx.can("authorization:debug:test") else { return unauthorized }
        return .json(200, ["status": "ok"])
    }

    /// `POST /api/v2/notifications/loop`: a Loop push (§5.1).
    static func loopNotification(_ ctx: Ctx) async -> SimResponse {
        guard ctx.can("notifications:loop:push") else { return unauthorized }
        return await NightscoutLoop.handle(ctx)
    }

    static func status(_ ctx: Ctx, authorized: JSONValue) -> SimResponse {
        let o = ctx.sim.options
        let r: [String: JSONValue] = [
            "status": "ok", "name": "nightscout", "version": .string(NightscoutV3.serverVersion),
            "serverTime": .string(NSDates.iso(ctx.now)), "serverTimeEpoch": .int(ctx.now),
            "apiEnabled": .bool(o.apiSecret != nil), "careportalEnabled": .bool(o.apiSecret != nil),
            "boluscalcEnabled": true,
            "settings": [
                "units": "mg/dl", "enable": ["careportal", "api", "loop"],
                "authDefaultRoles": .string(o.defaultRoles.joined(separator: " ")),
            ],
            "extendedSettings": [:], "authorized": authorized, "runtimeState": "loaded",
        ]
        return .json(200, .object(r))
    }

    // MARK: normalisation

    /// `created_at` → UTC ISO ms and `utcOffset` (default now).
    static func normalizeCreatedAt(_ f: inout [String: JSONValue], now: Int64) {
        if let v = f["created_at"], let p = NSDates.parseAny(v) {
            f["created_at"] = .string(NSDates.iso(p.ms))
            if f["utcOffset"] == nil { f["utcOffset"] = .int(Int64(p.offset ?? 0)) }
        } else {
            f["created_at"] = .string(NSDates.iso(now))
            if f["utcOffset"] == nil { f["utcOffset"] = 0 }
        }
    }

    /// Entries write semantics (§2.2).
    static func prepareEntry(_ f: inout [String: JSONValue], now: Int64) {
        var sys = now
        var off = 0
        if let ds = f["dateString"]?.stringValue, let p = NSDates.parseISO(ds) {
            sys = p.ms
            off = p.offset ?? 0
            f["dateString"] = .string(NSDates.iso(p.ms))
        } else if let d = f["date"], let p = NSDates.parseAny(d) {
            sys = p.ms
        }
        f["sysTime"] = .string(NSDates.iso(sys))
        if f["utcOffset"] == nil { f["utcOffset"] = .int(Int64(off)) }
    }

    /// Treatments `prepareData` (§2.3); may return a second (pre-bolus carbs) treatment.
    static func prepareTreatment(_ f: inout [String: JSONValue], now: Int64) -> [String: JSONValue]? {
        if let et = f.removeValue(forKey: "eventTime") { f["created_at"] = et }
        normalizeCreatedAt(&f, now: now)
        func number(_ v: JSONValue) -> Double {
            switch v {
            case .int, .double: return v.doubleValue!
            case .string(let s): return s.trimmingCharacters(in: .whitespaces).isEmpty ? 0 : (Double(s) ?? .nan)
            case .bool(let b): return b ? 1 : 0
            case .null: return 0
            default: return .nan
            }
        }
        for k in ["glucose", "targetTop", "targetBottom", "carbs", "insulin", "duration", "percent", "absolute",
            "relative", "preBolus"]
        {
            if let v = f[k] { f[k] = .number(number(v)) }
        }
        for k in ["targetTop", "targetBottom", "carbs", "insulin", "percent", "relative", "notes", "preBolus"] {
            if let v = f[k] {
                let empty = (v.doubleValue.map { $0 == 0 || $0.isNaN } ?? false) || v == .string("") || v == .null
                if empty { f.removeValue(forKey: k) }
            }
        }
        for k in ["absolute", "duration"] where f[k]?.doubleValue?.isNaN == true { f.removeValue(forKey: k) }
        if let g = f["glucose"]?.doubleValue, g == 0 || g.isNaN {
            for k in ["glucose", "glucoseType", "units"] { f.removeValue(forKey: k) }
        }
        if f["eventType"] == .string("Announcement") { f["isAnnouncement"] = true }
        // The pre-bolus carbs are dated `created_at + preBolus` minutes; where that is no
        // JavaScript date Nightscout's `toISOString` throws and stores no second treatment.
        if let pre = f["preBolus"]?.doubleValue, let carbs = f["carbs"], let ca = f["created_at"]?.stringValue,
            let p = NSDates.parseISO(ca), abs(Double(p.ms) + pre * 60000) <= NSDates.jsDateLimit
        {
            f.removeValue(forKey: "carbs")
            var second: [String: JSONValue] = [
                "eventType": f["eventType"] ?? .null, "carbs": carbs,
                "created_at": .string(NSDates.iso(Int64(Double(p.ms) + pre * 60000))), "utcOffset": f["utcOffset"] ?? 0,
            ]
            if let e = f["enteredBy"] { second["enteredBy"] = e }
            return second
        }
        return nil
    }

    static func v1Output(_ col: String, _ d: NSDoc) -> JSONValue {
        var f = d.fields
        f["_id"] = .string(d.oid)
        if col == "treatments" {
            // Read quirk: Number(carbs) / Number(insulin), absent → NaN → null.
            for k in ["carbs", "insulin"] {
                switch f[k] {
                case nil: f[k] = .null
                case .string(let s)?: f[k] = Double(s).map(JSONValue.number) ?? .null
                default: break
                }
            }
        }
        return .object(f)
    }

    static func query(_ ctx: Ctx, col: String, extra: [NSCondition], window: Bool) -> Result<NightscoutQuery.Parsed, SimResponse> {
        do {
            var p = try NightscoutQuery.parse(ctx.req.query, col: col)
            p.conditions += extra
            if extra.contains(where: { $0.field == "_id" }) { p.hasId = true }
            if window { NightscoutQuery.applyDefaultWindow(&p, col: col, now: ctx.now) }
            return .success(p)
        } catch {
            return .failure(.json(500, ["status": 500, "message": "Invalid date in query"]))
        }
    }

    // MARK: entries / treatments / devicestatus / food

    /// `GET`: documents, newest first (a `{spec}` tail: an `_id`, an entry type, `current`, food kind).
    static func readCollection(_ ctx: Ctx, col: String, tail: [String]) async -> SimResponse {
        let req = ctx.req
        guard ctx.can("api:\(col):read") else { return unauthorized }
        var extra: [NSCondition] = []
        var defaultCount = col == "treatments" ? 100 : 10
        var current = false
        if let spec = tail.first.map(stripExt) {
            if col == "entries", spec == "current" {
                current = true
            } else if NSObjectId.isValid(spec) {
                extra.append(NSCondition(field: "_id", op: .eq, value: .string(spec)))
            } else if col == "entries" {
                extra.append(NSCondition(field: "type", op: .eq, value: .string(spec)))
            } else if col == "food", spec == "quickpicks" || spec == "regular" {
                extra.append(NSCondition(field: "food", op: .eq, value: .string(spec == "quickpicks" ? "quickpick" : "food")))
            } else {
                return notFound
            }
        }
        if col == "treatments", req.query.contains(where: { $0.0.hasPrefix("find[") }) { defaultCount = 1000 }
        let parsed: NightscoutQuery.Parsed
        switch query(ctx, col: col, extra: extra, window: col != "food" && !current) {
        case .failure(let r): return r
        case .success(let p): parsed = p
        }
        var count = req.queryValue("count").flatMap { Int($0) } ?? defaultCount
        if current { count = 1 }
        let docs = await ctx.sim.store.transact { $0.docs(col) }
        let matched = NightscoutQuery.sortDescending(
            docs.filter { d in parsed.conditions.allSatisfy { $0.matches(d) } }, col: col)
        let page = Array(matched.prefix(max(count, 0)))
        var headers: [(String, String)] = []
        if col == "entries" || col == "treatments", let newest = page.first,
            let t = NSStoreData.virtualTime(col, newest)
        {
            headers.append(("Last-Modified", NSDates.rfc1123(t)))
            if let ims = req.header("if-modified-since").flatMap(NSDates.parseHTTPDate), ims / 1000 >= t / 1000 {
                return .empty(304, headers: headers)
            }
        }
        return .json(200, .array(page.map { v1Output(col, $0) }), headers: headers)
    }

    /// `POST`/`PUT`: stores the body (a document or an array), as v1 does.
    static func writeCollection(_ ctx: Ctx, col: String, tail: [String]) async -> SimResponse {
        let req = ctx.req
        guard ctx.writesEnabled else { return notFound }
        let op = req.method == "PUT" ? "update" : "create"
        guard ctx.can("api:\(col):read"), ctx.can("api:\(col):\(op)") else { return unauthorized }
        if col == "entries", tail.first == "preview" {
            return .json(200, ctx.body ?? .array([]))
        }
        var items: [[String: JSONValue]]
        switch ctx.body {
        case .array(let a)?: items = a.compactMap(\.objectValue)
        case .object(let o)?: items = [o]
        default: items = []
        }
        if col == "devicestatus" || col == "food",
            let rejection = invalidObjectID(in: items, creating: req.method == "POST")
        {
            return rejection
        }
        // Nightscout purifies what is POSTed to entries, treatments and devicestatus (not food, not PUT).
        if req.method == "POST", col != "food" { items = items.map(NSPurifier.purify) }
        let documents = items
        let now = ctx.now
        let stored = await ctx.sim.store.transact { data -> [JSONValue] in
            var out: [JSONValue] = []
            for var f in documents {
                var oid: String? = nil
                if let idv = f.removeValue(forKey: "_id")?.stringValue {
                    if NSObjectId.isValid(idv) { oid = idv } else if f["identifier"] == nil { f["identifier"] = .string(idv) }
                }
                switch col {
                case "entries":
                    prepareEntry(&f, now: now)
                    let key = f["sysTime"], type = f["type"]
                    if let i = data.index(col, where: { $0.fields["sysTime"] == key && $0.fields["type"] == type }) {
                        data.collections[col]![i].fields = f
                        out.append(v1Output(col, data.collections[col]![i]))
                        continue
                    }
                case "treatments":
                    let second = prepareTreatment(&f, now: now)
                    let idx = data.index(col) { d in
                        if let ident = f["identifier"] { return d.fields["identifier"] == ident }
                        if let oid { return d.oid == oid }
                        return d.fields["created_at"] == f["created_at"] && d.fields["eventType"] == f["eventType"]
                    }
                    if let idx {
                        data.collections[col]![idx].fields = f
                        out.append(v1Output(col, data.collections[col]![idx]))
                    } else {
                        let d = NSDoc(oid: oid ?? NSObjectId.make(), fields: f)
                        data.insert(col, d)
                        out.append(v1Output(col, d))
                    }
                    if let s = second {
                        let d = NSDoc(oid: NSObjectId.make(), fields: s)
                        data.insert(col, d)
                        out.append(v1Output(col, d))
                    }
                    continue
                case "devicestatus", "food":
                    normalizeCreatedAt(&f, now: now)
                    if col == "food", let oid, let i = data.index(col, where: { $0.oid == oid }) {
                        data.collections[col]![i].fields = f
                        out.append(v1Output(col, data.collections[col]![i]))
                        continue
                    }
                default: break
                }
                let d = NSDoc(oid: oid ?? NSObjectId.make(), fields: f)
                data.insert(col, d)
                out.append(v1Output(col, d))
            }
            return out
        }
        return .json(200, .array(stored))
    }

    /// `DELETE`: removes what the query (and a `{spec}` tail) matches.
    static func deleteCollection(_ ctx: Ctx, col: String, tail: [String]) async -> SimResponse {
        guard ctx.writesEnabled else { return notFound }
        guard ctx.can("api:\(col):read"), ctx.can("api:\(col):delete") else { return unauthorized }
        var extra: [NSCondition] = []
        if let spec = tail.first, spec != "*" {
            if NSObjectId.isValid(spec) {
                extra.append(NSCondition(field: "_id", op: .eq, value: .string(spec)))
            } else if col == "entries" {
                extra.append(NSCondition(field: "type", op: .eq, value: .string(spec)))
            } else if col == "devicestatus" || col == "food" {
                return invalidID(spec, creating: false)
            } else {
                extra.append(NSCondition(field: "_id", op: .eq, value: .string(spec), idAlsoMatchesIdentifier: true))
            }
        }
        let parsed: NightscoutQuery.Parsed
        switch query(ctx, col: col, extra: extra, window: col != "food") {
        case .failure(let r): return r
        case .success(let p): parsed = p
        }
        let n = await ctx.sim.store.transact { data -> Int in
            let before = data.docs(col).count
            data.collections[col]!.removeAll { d in parsed.conditions.allSatisfy { $0.matches(d) } }
            return before - data.docs(col).count
        }
        return .json(200, ["acknowledged": true, "deletedCount": .int(Int64(n))])
    }

    // MARK: profile

    /// `GET`: profiles, newest first, or `current`.
    static func readProfile(_ ctx: Ctx, tail: [String], queryForm: Bool) async -> SimResponse {
        let col = "profile"
        guard ctx.can("api:profile:read") else { return unauthorized }
        let docs = await ctx.sim.store.transact { $0.docs(col) }
        if tail.first == "current" {
            let newest = NightscoutQuery.sortDescending(docs, col: col).first
            return .json(200, newest.map { v1Output(col, $0) } ?? .null)
        }
        let parsed: NightscoutQuery.Parsed
        switch query(ctx, col: col, extra: [], window: queryForm) {
        case .failure(let r): return r
        case .success(let p): parsed = p
        }
        let count = ctx.req.queryValue("count").flatMap { Int($0) } ?? 10
        let matched = NightscoutQuery.sortDescending(
            docs.filter { d in parsed.conditions.allSatisfy { $0.matches(d) } }, col: col)
        return .json(200, .array(matched.prefix(max(count, 0)).map { v1Output(col, $0) }))
    }

    /// `POST`/`PUT`: stores profiles.
    static func writeProfile(_ ctx: Ctx) async -> SimResponse {
        let col = "profile"
        guard ctx.writesEnabled else { return notFound }
        let op = ctx.req.method == "PUT" ? "update" : "create"
        guard ctx.can("api:profile:\(op)") else { return unauthorized }
        var items: [[String: JSONValue]]
        switch ctx.body {
        case .array(let a)?: items = a.compactMap(\.objectValue)
        case .object(let o)?: items = [o]
        default: items = []
        }
        if let rejection = invalidObjectID(in: items, creating: ctx.req.method == "POST") { return rejection }
        if ctx.req.method == "POST" { items = items.map(NSPurifier.purify) }
        let documents = items
        let now = ctx.now
        let out = await ctx.sim.store.transact { data -> [JSONValue] in
            documents.map { item in
                var f = item
                let oid = f.removeValue(forKey: "_id")?.stringValue
                if f["created_at"] == nil { f["created_at"] = .string(NSDates.iso(now)) }
                if let oid, let i = data.index(col, where: { $0.oid == oid }) {
                    data.collections[col]![i].fields = f
                    return v1Output(col, data.collections[col]![i])
                }
                let d = NSDoc(oid: oid ?? NSObjectId.make(), fields: f)
                data.insert(col, d)
                return v1Output(col, d)
            }
        }
        return .json(200, ctx.req.method == "PUT" && out.count == 1 ? out[0] : .array(out))
    }

    /// `DELETE`: removes one profile by `_id`.
    static func deleteProfile(_ ctx: Ctx, tail: [String]) async -> SimResponse {
        let col = "profile"
        guard ctx.writesEnabled else { return notFound }
        guard ctx.can("api:profile:delete") else { return unauthorized }
        guard let id = tail.first, NSObjectId.isValid(id) else { return invalidID(tail.first ?? "undefined", creating: false) }
        await ctx.sim.store.transact { data in data.collections[col]!.removeAll { $0.oid == id } }
        return .json(200, [:])
    }

    /// 400 for the first document whose `_id` is not a 24-character hex string, else nil.
    static func invalidObjectID(in items: [[String: JSONValue]], creating: Bool) -> SimResponse? {
        for item in items {
            if let idv = item["_id"], idv != .null, !(idv.stringValue.map(NSObjectId.isValid) ?? false) {
                return invalidID(idv.stringValue ?? idv.jsonString, creating: creating)
            }
        }
        return nil
    }

    /// Nightscout's `sendJSONStatus(400, 'Invalid _id format', …)` for a bad `_id` (in a body
    /// being created, or in a path or update).
    static func invalidID(_ got: String, creating: Bool) -> SimResponse {
        let rule = creating ? "Must be 24-character hex string or omit for auto-generation." : "Must be 24-character hex string."
        return .json(400, ["status": 400, "message": "Invalid _id format", "description": .string("\(rule) Got: \(got)")])
    }
}
