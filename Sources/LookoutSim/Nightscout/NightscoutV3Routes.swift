import Foundation
import LookoutWire

/// API v3 (§3): envelopes, status codes and messages as cgm-remote-monitor 15.0.7.
enum NightscoutV3 {
    static let apiVersion = "3.0.3-alpha"
    static let serverVersion = "15.0.7"
    static let reserved: Set<String> = ["token", "sort", "sort$desc", "limit", "skip", "fields", "now"]
    static let immutable = [
        "identifier", "date", "utcOffset", "eventType", "device", "app", "srvCreated", "subject", "srvModified",
        "modifiedBy", "isValid",
    ]
    static let fallbackFields: [String: [String]] = [
        "devicestatus": ["created_at", "device"], "entries": ["date", "type"], "food": ["created_at"],
        "profile": ["created_at"], "treatments": ["created_at", "eventType"], "settings": [],
    ]

    static func err(_ status: Int, _ message: String? = nil) -> SimResponse {
        var o: [String: JSONValue] = ["status": .int(Int64(status))]
        if let message { o["message"] = .string(message) }
        return .json(status, .object(o))
    }

    static func versionResult(now: Int64) -> [String: JSONValue] {
        [
            "version": .string(serverVersion), "apiVersion": .string(apiVersion), "srvDate": .int(now),
            "storage": ["storage": "mongodb", "version": "simulated"],
        ]
    }

    // MARK: route handlers

    /// `GET /api/v3/version` (no credentials needed).
    static func version(_ req: SimRequest, sim: NightscoutSimulator) -> SimResponse {
        .json(200, ["status": 200, "result": .object(versionResult(now: NSDates.ms(sim.options.clock())))])
    }

    /// The credentials of a request (§3.2: every route but `version` checks them first), or the
    /// 401 answer.
    static func authenticate(_ req: SimRequest, sim: NightscoutSimulator) async -> Result<NSAuthResult, SimResponse> {
        guard sim.options.api3Security else {
            return .success(NSAuthResult(
                permissions: ["*"], groups: [["*"]], subject: nil, isSecret: false, noCredentials: false, failed: false))
        }
        let now = NSDates.ms(sim.options.clock())
        switch await sim.auth.resolveV3(authorization: req.header("authorization"), client: req.client, nowSec: now / 1000) {
        case .missing: return .failure(err(401, "Missing or bad access token or JWT"))
        case .bad: return .failure(err(401, "Bad access token or JWT"))
        case .ok(let a): return .success(a)
        }
    }

    /// `GET /api/v3/status`: the version and what the credentials may do per collection.
    static func status(_ req: SimRequest, sim: NightscoutSimulator) async -> SimResponse {
        let auth: NSAuthResult
        switch await authenticate(req, sim: sim) {
        case .failure(let denied): return denied
        case .success(let a): auth = a
        }
        var r = versionResult(now: NSDates.ms(sim.options.clock()))
        var perms: [String: JSONValue] = [:]
        for c in NSCollections.all {
            // quirk (§3.12): the server evaluates `api:undefined:<op>`.
            let s = zip("crud", ["create", "read", "update", "delete"]).filter {
                NSPermission.permitted(auth.permissions, "api:undefined:\($0.1)")
            }.map { String($0.0) }.joined()
            if !s.isEmpty { perms[c] = .string(s) }
        }
        r["apiPermissions"] = .object(perms)
        return .json(200, ["status": 200, "result": .object(r)])
    }

    /// `GET /api/v3/lastModified`: the newest modification time of each readable collection.
    static func lastModified(_ req: SimRequest, sim: NightscoutSimulator) async -> SimResponse {
        let auth: NSAuthResult
        switch await authenticate(req, sim: sim) {
        case .failure(let denied): return denied
        case .success(let a): auth = a
        }
        let now = NSDates.ms(sim.options.clock())
        let readable = NSCollections.all.filter { NSPermission.permitted(auth.permissions, "api:\($0):read") }
        let cols = await sim.store.transact { data -> [String: JSONValue] in
            var out: [String: JSONValue] = [:]
            for c in readable {
                let times = data.docs(c).compactMap { d -> Int64? in
                    let v = c == "settings" ? nil : NSStoreData.virtualTime(c, d)
                    return [d.storedSrvModified, v].compactMap { $0 }.max()
                }
                if let m = times.max() { out[c] = .int(m) }
            }
            return out
        }
        return .json(200, ["status": 200, "result": ["srvDate": .int(now), "collections": .object(cols)]])
    }

    /// The context of a `/api/v3/{collection}…` request: credentials first, then the collection
    /// (`{collection}` may carry a format extension, e.g. `entries.json`).
    static func context(_ req: SimRequest, sim: NightscoutSimulator) async -> Result<Ctx, SimResponse> {
        var col = req.parameters["collection"] ?? ""
        var ext: String? = nil
        if let dot = col.firstIndex(of: ".") {
            ext = String(col[col.index(after: dot)...])
            col = String(col[..<dot])
        }
        // Express only has routes for the enabled collections: anything else is the final 404
        // handler, reached before any credential check.
        guard NSCollections.all.contains(col) else { return .failure(err(404, "Bad operation or collection")) }
        let auth: NSAuthResult
        switch await authenticate(req, sim: sim) {
        case .failure(let denied): return .failure(denied)
        case .success(let a): auth = a
        }
        return .success(Ctx(col: col, auth: auth, now: NSDates.ms(sim.options.clock()), sim: sim, req: req, ext: ext))
    }

    /// A v3 path or method no route answers: Express's final handler, 404 without any credential
    /// check (`lib/api3/index.js`).
    static func unmatched(_ req: SimRequest, sim: NightscoutSimulator) async -> SimResponse {
        err(404, "Bad operation or collection")
    }

    /// 406 when the request asks for anything but JSON (a non-`json` extension or `Accept`).
    static func unsupportedFormat(_ ctx: Ctx) -> SimResponse? {
        if let ext = ctx.ext, ext != "json" { return err(406, "Unsupported output format requested") }
        if let accept = ctx.req.header("accept"), !(accept.contains("json") || accept.contains("*/*")) {
            return err(406, "Unsupported output format requested")
        }
        return nil
    }

    struct Ctx: Sendable {
        var col: String
        var auth: NSAuthResult
        var now: Int64
        var sim: NightscoutSimulator
        var req: SimRequest
        /// The format extension of `{collection}` (e.g. `json`), if any.
        var ext: String? = nil
        var subject: String? { auth.subject }
        func can(_ op: String) -> Bool { NSPermission.permitted(auth.permissions, "api:\(col):\(op)") }
        func denied(_ op: String) -> SimResponse { err(403, "Missing permission api:\(col):\(op)") }
        /// Search/history on settings need `admin` (§1.7).
        var listOp: String { col == "settings" ? "admin" : "read" }
    }

    // MARK: helpers

    /// Output form of a document: no `_id`, identifier and virtual srvModified/srvCreated for v1 docs.
    static func output(_ c: String, _ d: NSDoc, fields: String?) -> JSONValue {
        var f = d.fields
        if f["identifier"] == nil { f["identifier"] = .string(d.oid) }
        if f["srvModified"] == nil, let v = NSStoreData.virtualTime(c, d) { f["srvModified"] = .int(v) }
        if f["srvCreated"] == nil, let v = NSStoreData.virtualTime(c, d) { f["srvCreated"] = .int(v) }
        if let fields, fields != "_all", !fields.isEmpty {
            let keep = Set(fields.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            f = f.filter { keep.contains($0.key) }
        }
        return .object(f)
    }

    static func find(_ data: NSStoreData, _ c: String, _ id: String) -> Int? {
        data.index(c) { d in
            d.fields["identifier"]?.stringValue == id || (d.fields["identifier"] == nil && d.oid == id)
        }
    }

    static func location(_ c: String, _ id: String) -> (String, String) { ("Location", "/api/v3/\(c)/\(id)") }
    static func lastModifiedHeader(_ ms: Int64) -> (String, String) { ("Last-Modified", NSDates.rfc1123(ms)) }

    static func jsEqual(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
        if let x = a?.doubleValue, let y = b?.doubleValue { return x == y }
        return a == b
    }

    /// Date normalisation of CREATE/PUT (§3.3 step 1).
    static func normalizeDate(_ body: inout [String: JSONValue], fallback: Bool) {
        guard let cand = body["date"] ?? (fallback ? body["created_at"] : nil), let p = NSDates.parseAny(cand) else {
            return
        }
        body["date"] = .int(p.ms)
        if body["utcOffset"] == nil { body["utcOffset"] = .int(Int64(p.offset ?? 0)) }
        if fallback { body["created_at"] = .string(NSDates.iso(p.ms)) }
    }

    /// `validateCommon` (§3.3 step 4).
    static func validateCommon(_ f: [String: JSONValue], partial: Bool) -> SimResponse? {
        if !partial || f["date"] != nil {
            guard let d = f["date"]?.doubleValue, d > 946_684_800_000 else { return err(400, "Bad or missing date field") }
        }
        if !partial || f["utcOffset"] != nil {
            guard let u = f["utcOffset"]?.doubleValue, (-1440...1440).contains(u) else {
                return err(400, "Bad or missing utcOffset field")
            }
        }
        if !partial || f["app"] != nil {
            guard let a = f["app"]?.stringValue, !a.isEmpty else { return err(400, "Bad or missing app field") }
        }
        return nil
    }

    /// Immutable rule (§3.10); nil when fine.
    static func immutableViolation(_ body: [String: JSONValue], _ stored: NSDoc, skipIdentifier: Bool) -> SimResponse? {
        for f in immutable where body[f] != nil {
            if skipIdentifier && f == "identifier" { continue }
            if !jsEqual(body[f], stored.fields[f]) { return err(400, "Field \(f) cannot be modified by the client") }
        }
        return nil
    }

    /// Duration normalisation of PUT/PATCH (§3.7).
    static func normalizeDuration(_ f: inout [String: JSONValue]) {
        guard f["duration"] != nil || f["durationInMilliseconds"] != nil, f["endmills"] == nil else { return }
        var base: Double? = f["mills"]?.doubleValue
        if base == nil, let ca = f["created_at"]?.stringValue { base = NSDates.parseISO(ca).map { Double($0.ms) } }
        if base == nil { base = f["date"]?.doubleValue }
        guard let b = base else { return }
        let ms: Double
        if let dms = f["durationInMilliseconds"]?.doubleValue { ms = dms } else { ms = (f["duration"]?.doubleValue ?? 0) * 60000 }
        let end = b + ms
        f["endmills"] = .number(end)
        f["durationInMilliseconds"] = .number(end - b)
        f["duration"] = .number(((end - b) / 60000).rounded())
    }

    static func parseBody(_ req: SimRequest) -> Result<JSONValue?, SimResponse> {
        if req.body.isEmpty { return .success(nil) }
        guard let j = try? JSONValue.parse(req.body) else { return .failure(err(500, "Internal Server Error")) }
        return .success(j)
    }

    static func isEmptyBody(_ j: JSONValue?) -> Bool {
        switch j {
        case nil, .null?: return true
        case .object(let o)?: return o.isEmpty
        case .array(let a)?: return a.isEmpty
        default: return false
        }
    }

    static func sinceSeconds(_ header: String?) -> Int64? {
        header.flatMap(NSDates.parseHTTPDate).map { $0 / 1000 }
    }

    static func parseLimit(_ req: SimRequest, max: Int) -> Result<Int, SimResponse> {
        guard let l = req.queryValue("limit") else { return .success(max) }
        guard let n = Int(l), n > 0, n <= max else { return .failure(err(400, "Parameter limit out of tolerance")) }
        return .success(n)
    }

    // MARK: operations

    /// Stores a new v3 document with its server fields; returns the refusal (403, 4xx from
    /// validation) when it cannot be created.
    static func insertNew(
        _ fields: [String: JSONValue], into data: inout NSStoreData, _ col: String, canCreate: Bool, subject: String?,
        now: Int64
    ) -> SimResponse? {
        guard canCreate else { return err(403, "Missing permission api:\(col):create") }
        if let v = validateCommon(fields, partial: false) { return v }
        var f = fields
        f["srvCreated"] = .int(now)
        f["srvModified"] = .int(now)
        if let subject { f["subject"] = .string(subject) }
        data.insert(col, NSDoc(oid: NSObjectId.make(), fields: f))
        return nil
    }

    /// A request body read as a document, or the answer that rejects it.
    enum DocumentBody {
        case document([String: JSONValue])
        case rejected(SimResponse)
    }

    /// The body of a create or update: 400 when missing or not an object; `_id` is dropped and
    /// the date normalised.
    static func documentBody(_ ctx: Ctx) -> DocumentBody {
        let parsed: JSONValue?
        switch parseBody(ctx.req) {
        case .failure(let r): return .rejected(r)
        case .success(let j): parsed = j
        }
        if isEmptyBody(parsed) { return .rejected(err(400, "Bad or missing request body")) }
        guard var body = parsed?.objectValue else { return .rejected(err(400, "Bad or missing date field")) }
        body.removeValue(forKey: "_id")
        normalizeDate(&body, fallback: ctx.sim.options.createdAtFallback)
        return .document(body)
    }

    static func create(_ ctx: Ctx) async -> SimResponse {
        var body: [String: JSONValue]
        switch documentBody(ctx) {
        case .rejected(let response): return response
        case .document(let document): body = document
        }
        if let idv = body["identifier"], !(idv.stringValue != nil) { return err(400, "Bad or missing identifier field") }
        if (body["identifier"]?.stringValue ?? "").isEmpty { body["identifier"] = .string(NSIdentifier.calculate(body)) }
        let identifier = body["identifier"]!.stringValue!
        let col = ctx.col, now = ctx.now, subject = ctx.subject
        let canCreate = ctx.can("create"), canUpdate = ctx.can("update")
        let dedupFallback = ctx.sim.options.dedupFallback
        let b = body
        return await ctx.sim.store.transact { data -> SimResponse in
            let fb = fallbackFields[col] ?? []
            let idx = data.index(col) { d in
                if d.fields["identifier"]?.stringValue == identifier { return true }
                if d.fields["identifier"] == nil {
                    if NSObjectId.isValid(identifier), d.oid == identifier { return true }
                    if dedupFallback, !fb.isEmpty, fb.allSatisfy({ b[$0] != nil }),
                        fb.allSatisfy({ jsEqual(b[$0], d.fields[$0]) })
                    {
                        return true
                    }
                }
                return false
            }
            if let idx {
                guard canUpdate else { return err(403, "Missing permission api:\(col):update") }
                if let v = validateCommon(b, partial: false) { return v }
                let stored = data.collections[col]![idx]
                if stored.isValid {
                    if let v = immutableViolation(b, stored, skipIdentifier: true) { return v }
                    if stored.isReadOnly { return err(422, "Trying to modify read-only document") }
                }
                var f = b
                f["srvCreated"] = stored.fields["srvCreated"] ?? .int(now)
                f["srvModified"] = .int(now)
                if let subject { f["subject"] = .string(subject) }
                normalizeDuration(&f)
                data.collections[col]![idx].fields = f
                var out: [String: JSONValue] = [
                    "status": 200, "lastModified": .int(now), "identifier": .string(identifier), "isDeduplication": true,
                ]
                if stored.identifier != identifier { out["deduplicatedIdentifier"] = .string(stored.identifier) }
                return .json(200, .object(out), headers: [location(col, identifier), lastModifiedHeader(now)])
            }
            if let refused = insertNew(b, into: &data, col, canCreate: canCreate, subject: subject, now: now) {
                return refused
            }
            return .json(
                201, ["status": 201, "identifier": .string(identifier), "lastModified": .int(now)],
                headers: [location(col, identifier), lastModifiedHeader(now)])
        }
    }

    static func read(_ ctx: Ctx, id: String) async -> SimResponse {
        guard ctx.can("read") else { return ctx.denied("read") }
        let col = ctx.col
        let fields = ctx.req.queryValue("fields")
        let ims = sinceSeconds(ctx.req.header("if-modified-since"))
        return await ctx.sim.store.transact { data -> SimResponse in
            guard let i = find(data, col, id) else { return err(404) }
            let d = data.collections[col]![i]
            guard d.isValid else { return err(410) }
            var headers: [(String, String)] = []
            if let lm = NSStoreData.effectiveSrvModified(col, d) {
                headers.append(lastModifiedHeader(lm))
                if let ims, ims >= lm / 1000 { return .empty(304, headers: headers) }
            }
            return .json(200, ["status": 200, "result": output(col, d, fields: fields)], headers: headers)
        }
    }

    static func update(_ ctx: Ctx, id: String) async -> SimResponse {
        var body: [String: JSONValue]
        switch documentBody(ctx) {
        case .rejected(let response): return response
        case .document(let document): body = document
        }
        body["identifier"] = .string(id)
        let col = ctx.col, now = ctx.now, subject = ctx.subject
        let canCreate = ctx.can("create"), canUpdate = ctx.can("update")
        let ius = sinceSeconds(ctx.req.header("if-unmodified-since"))
        let b = body
        return await ctx.sim.store.transact { data -> SimResponse in
            guard let idx = find(data, col, id) else {
                if let refused = insertNew(b, into: &data, col, canCreate: canCreate, subject: subject, now: now) {
                    return refused
                }
                return .json(
                    201, ["status": 201, "identifier": .string(id), "lastModified": .int(now)],
                    headers: [("Location", "/api/v3/\(col)/\(id)/\(id)"), lastModifiedHeader(now)])
            }
            guard canUpdate else { return err(403, "Missing permission api:\(col):update") }
            let stored = data.collections[col]![idx]
            guard stored.isValid else { return err(410) }
            if let ius, let sm = NSStoreData.effectiveSrvModified(col, stored), ius < sm / 1000 { return err(412) }
            if let v = validateCommon(b, partial: false) { return v }
            var check = b
            if stored.fields["identifier"] == nil { check.removeValue(forKey: "identifier") }
            if let v = immutableViolation(check, stored, skipIdentifier: false) { return v }
            if stored.isReadOnly { return err(422, "Trying to modify read-only document") }
            var f = b
            f["srvCreated"] = stored.fields["srvCreated"] ?? NSStoreData.virtualTime(col, stored).map(JSONValue.int)
            f["srvModified"] = .int(now)
            if let subject { f["subject"] = .string(subject) }
            normalizeDuration(&f)
            data.collections[col]![idx].fields = f
            return .json(200, ["status": 200, "lastModified": .int(now)], headers: [lastModifiedHeader(now)])
        }
    }

    static func patch(_ ctx: Ctx, id: String) async -> SimResponse {
        let parsed: JSONValue?
        switch parseBody(ctx.req) {
        case .failure(let r): return r
        case .success(let j): parsed = j
        }
        if isEmptyBody(parsed) { return err(400, "Bad or missing request body") }
        guard ctx.can("update") else { return ctx.denied("update") }
        guard var body = parsed?.objectValue else { return err(400, "Bad or missing request body") }
        body.removeValue(forKey: "_id")
        let col = ctx.col, now = ctx.now, subject = ctx.subject
        let ius = sinceSeconds(ctx.req.header("if-unmodified-since"))
        let b = body
        return await ctx.sim.store.transact { data -> SimResponse in
            guard let idx = find(data, col, id) else { return err(404) }
            let stored = data.collections[col]![idx]
            guard stored.isValid else { return err(410) }
            if let ius, let sm = NSStoreData.effectiveSrvModified(col, stored), ius < sm / 1000 { return err(412) }
            var check = b
            if stored.fields["identifier"] == nil, check["identifier"]?.stringValue == stored.oid {
                check.removeValue(forKey: "identifier")
            }
            if let v = immutableViolation(check, stored, skipIdentifier: false) { return v }
            if let v = validateCommon(b, partial: true) { return v }
            if stored.isReadOnly { return err(422, "Trying to modify read-only document") }
            var f = stored.fields
            for (k, v) in b { f[k] = v }
            f["srvModified"] = .int(now)
            if let subject { f["modifiedBy"] = .string(subject) }
            normalizeDuration(&f)
            data.collections[col]![idx].fields = f
            return .json(200, ["status": 200], headers: [lastModifiedHeader(now)])
        }
    }

    static func delete(_ ctx: Ctx, id: String) async -> SimResponse {
        guard ctx.can("delete") else { return ctx.denied("delete") }
        let col = ctx.col, now = ctx.now, subject = ctx.subject
        let permanent = ctx.req.queryValue("permanent") == "true"
        return await ctx.sim.store.transact { data -> SimResponse in
            guard let idx = find(data, col, id) else { return err(404) }
            if data.collections[col]![idx].isReadOnly { return err(422, "Trying to modify read-only document") }
            if permanent {
                data.collections[col]!.remove(at: idx)
            } else {
                data.collections[col]![idx].fields["isValid"] = false
                data.collections[col]![idx].fields["srvModified"] = .int(now)
                if let subject { data.collections[col]![idx].fields["modifiedBy"] = .string(subject) }
            }
            return .json(200, ["status": 200])
        }
    }

    /// Filter coercion (§3.4).
    static func coerce(field: String, _ raw: String) -> JSONValue {
        if ["date", "srvModified", "srvCreated"].contains(field), let p = NSDates.parseAny(.string(raw)) {
            return .int(p.ms)
        }
        if field == "created_at", let p = NSDates.parseAny(.string(raw)) { return .string(NSDates.iso(p.ms)) }
        if raw == "true" { return true }
        if raw == "false" { return false }
        if raw.count >= 2, raw.hasPrefix("'"), raw.hasSuffix("'") { return .string(String(raw.dropFirst().dropLast())) }
        if let i = Int64(raw) { return .int(i) }
        if let d = Double(raw), d.isFinite, raw.first.map({ $0.isNumber || $0 == "-" || $0 == "." }) == true {
            return .double(d)
        }
        return .string(raw)
    }

    static func search(_ ctx: Ctx) async -> SimResponse {
        guard ctx.can(ctx.listOp) else { return ctx.denied(ctx.listOp) }
        let req = ctx.req
        let limit: Int
        switch parseLimit(req, max: ctx.sim.options.api3MaxLimit) {
        case .failure(let r): return r
        case .success(let l): limit = l
        }
        var skip = 0
        if let s = req.queryValue("skip") {
            guard let n = Int(s), n >= 0 else { return err(400, "Parameter skip out of tolerance") }
            skip = n
        }
        let sortAsc = req.queryValue("sort"), sortDesc = req.queryValue("sort$desc")
        if sortAsc != nil && sortDesc != nil { return err(400, "Parameters sort and sort_desc cannot be combined") }
        var conds: [NSCondition] = []
        for (k, v) in req.query where !reserved.contains(k) {
            var field = k
            var op = NSOp.eq
            if let dollar = k.lastIndex(of: "$") {
                field = String(k[..<dollar])
                let opName = String(k[k.index(after: dollar)...])
                guard let o = NSOp(rawValue: opName) else { return err(400, "Unsupported filter operator \(opName)") }
                op = o
            }
            switch op {
            case .in, .nin:
                conds.append(
                    NSCondition(field: field, op: op, value: .null, values: v.split(separator: "|").map { .string(String($0)) }))
            case .re: conds.append(NSCondition(field: field, op: op, value: .string(v)))
            default: conds.append(NSCondition(field: field, op: op, value: coerce(field: field, v)))
            }
        }
        let col = ctx.col, fields = req.queryValue("fields")
        let sortField = sortDesc ?? sortAsc
        let desc = sortDesc != nil
        let docs = await ctx.sim.store.transact { data in data.docs(col) }
        var matched = docs.filter { d in
            d.isValid
                && conds.allSatisfy { c in
                    // `identifier` filters see only stored identifiers (v1 docs lack the field).
                    c.matches(d)
                }
        }
        let keys = (sortField.map { [$0] } ?? []) + ["identifier", "created_at", "date"]
        matched.sort { a, b in
            for k in keys {
                let c = NSValueOrder.compare(NSValueOrder.lookup(a.fields, k), NSValueOrder.lookup(b.fields, k))
                if c != 0 { return desc ? c > 0 : c < 0 }
            }
            return false
        }
        let page = matched.dropFirst(skip).prefix(limit).map { output(col, $0, fields: fields) }
        return .json(200, ["status": 200, "result": .array(Array(page))])
    }

    static func history(_ ctx: Ctx, since: String?) async -> SimResponse {
        guard ctx.can(ctx.listOp) else { return ctx.denied(ctx.listOp) }
        let badLM = err(400, "Bad or missing Last-Modified header/parameter")
        let predicate: @Sendable (Int64) -> Bool
        if let since {
            guard let p = NSDates.parseAny(.string(since)), p.ms >= 946_684_800_000 else { return badLM }
            predicate = { $0 > p.ms }
        } else {
            guard let h = ctx.req.header("last-modified"), let ms = NSDates.parseHTTPDate(h), ms >= 946_684_800_000
            else { return badLM }
            let floored = ms / 1000 * 1000
            predicate = { $0 >= floored }
        }
        let limit: Int
        switch parseLimit(ctx.req, max: ctx.sim.options.api3MaxLimit) {
        case .failure(let r): return r
        case .success(let l): limit = l
        }
        let col = ctx.col, fields = ctx.req.queryValue("fields")
        // Documents with a stored srvModified in (srvModified, position) order, cached by the store;
        // the predicate is monotone in srvModified, so the page starts at a binary-searched position.
        let index = await ctx.sim.store.historyIndex(col)
        let start = index.firstMatch(predicate)
        let matched = index.order[start..<min(index.order.count, start + max(0, limit))]
        guard let maxSM = matched.last?.srvModified else { return .json(200, ["status": 200, "result": []]) }
        return .json(
            200, ["status": 200, "result": .array(matched.map { output(col, index.docs[$0.position], fields: fields) })],
            headers: [lastModifiedHeader(maxSM), ("ETag", "W/\"\(maxSM)\"")])
    }
}
