import Foundation
import LookoutStore
import LookoutWire
import Lua
import NightscoutKit

/// Writing: `create`, `upload_bg` and `upload_treatment` go through the site's durable outbox;
/// `update`, `patch` and `delete` are sent directly.
extension NightscoutSite {
    static var writeMethods: [String: LuaBinding] {
        [
            "create": { call in
                let collection = try collection(call, 1)
                return try queue(call, collection, try document(call, 2, collection: collection, now: call.engine.clock.now()))
            },
            "update": { call in try update(call) },
            "patch": { call in try patch(call) },
            "delete": { call in try delete(call) },
            "upload_bg": { call in try queue(call, .entries, try bgReading(call, 1)) },
            "upload_treatment": { call in try queue(call, .treatments, try treatment(call, 1)) },
        ]
    }

    /// The app name written into documents that name none (`app`, required by v3).
    static let appName = "lookout"

    /// A document ready for the outbox: its identifier (made here, stable across re-sends) and JSON.
    struct QueuedDocument: Sendable {
        var identifier: String
        var body: Data
    }

    /// How long an upload call waits for its first attempt before answering "pending" (the send
    /// goes on in the background): the client's request timeout and a little more. The attempt
    /// ends by itself before that (a refused connection at once, an unanswered one after the
    /// connect timeout), so a refusal always comes back as `nil, err`, even from a site that
    /// delays its 401 answers (Nightscout waits 5 s more per failed login from an address).
    static func firstAttemptWindow(_ client: NightscoutClient) -> TimeInterval { client.timeout + 5 }

    /// Stores the document in the site's outbox, tries to send it, and answers with the item:
    /// `{id, state = "sent" | "pending", deduplicated, attempts, error, next_attempt}`, or
    /// `nil, err` (with `err.outbox_id`) when the server refused it for good.
    static func queue(_ call: LuaCall, _ collection: V3Collection, _ document: QueuedDocument) throws -> LuaReturn {
        let site = try site(call)
        if let recorded = SideEffectRecorder.upload(call, site: site.label, collection: collection.rawValue, document) { return recorded }
        let client = site.client, outboxes = site.outboxes, queueKey = site.queue
        let source = call.engine.options.name
        let engine = call.engine
        return try wait(call, "nightscout upload \(collection.rawValue)", {
            _ = try outboxes.storeWithRoom()
            let (outbox, drainer) = try outboxes.outbox(for: client, queue: queueKey)
            let item = try await outbox.enqueue(collection, identifier: document.identifier, body: document.body, source: source,
                                                quota: outboxes.quota)
            var result = await firstAttempt(outbox, item, within: firstAttemptWindow(client))
            if result.state == .pending { drainer.kick() }
            // A document with the identifier of one queued before (same device, date and event
            // type) but other content is not queued again (one item per identifier): say so, as
            // the seed's `wasDeduplicated` and the server's own deduplication would.
            if item.body != document.body, (try? JSONValue.parse(item.body)) != (try? JSONValue.parse(document.body)) {
                result.deduplicated = true
            }
            return result
        }) { stack, item in
            guard item.state == .failed else {
                stack.push(OutboxLua.value(item))
                return 1
            }
            stack.pushNil()
            engine.push(error: OutboxLua.error(item), on: stack)
            return 2
        }
    }

    /// The outcome of the first attempt if it ends within `window` seconds, else the item as
    /// queued (the attempt goes on).
    static func firstAttempt(_ outbox: Outbox, _ item: OutboxItem, within window: TimeInterval) async -> OutboxItem {
        await FirstAttempt.result(within: window) { await outbox.attempt(item.identifier) ?? item } ?? item
    }

    /// `home:update(collection, identifier, doc)`: replaces a document (v3).
    static func update(_ call: LuaCall) throws -> LuaReturn {
        let client = try site(call).client
        let collection = try collection(call, 1)
        let identifier = try identifierArgument(call, 2)
        let body = try document(call, 3, collection: collection, identifier: identifier).body
        if let recorded = SideEffectRecorder.write(call, "update", collection.rawValue, identifier, body) { return recorded }
        return try wait(call, "nightscout update \(collection.rawValue)", {
            try await requireV3(client, for: "update")
            return try await client.update(collection, identifier: identifier, json: body)
        }) { stack, result in
            var fields: [String: LuaValue] = ["created": .bool(result.wasInserted)]
            if let id = result.identifier { fields["identifier"] = .text(id) }
            if let modified = result.lastModified { fields["last_modified"] = .int(modified) }
            stack.push(.object(fields))
            return 1
        }
    }

    /// `home:patch(collection, identifier, fields)`: sets some fields (v3).
    static func patch(_ call: LuaCall) throws -> LuaReturn {
        let client = try site(call).client
        let collection = try collection(call, 1)
        let identifier = try identifierArgument(call, 2)
        guard case .object(let fields) = try call.value(3, name: "fields"), !fields.isEmpty else {
            throw call.argumentError(3, "fields: expected a table of at least one named field")
        }
        let body = try encode(call, .object(fields), argument: 3)
        if let recorded = SideEffectRecorder.write(call, "patch", collection.rawValue, identifier, body) { return recorded }
        return try wait(call, "nightscout patch \(collection.rawValue)", {
            try await requireV3(client, for: "patch")
            try await client.patch(collection, identifier: identifier, json: body)
        }) { stack, _ in
            stack.push(true)
            return 1
        }
    }

    /// `home:delete(collection, identifier [, {permanent=true}])`: soft delete, or physical (v3).
    static func delete(_ call: LuaCall) throws -> LuaReturn {
        let client = try site(call).client
        let collection = try collection(call, 1)
        let identifier = try identifierArgument(call, 2)
        let opts = try call.options(3)
        if let unknown = opts.keys.first(where: { $0 != "permanent" }) {
            throw call.argumentError(3, "unknown option '\(unknown)' (known: permanent)")
        }
        guard opts["permanent"].map({ if case .bool = $0 { return true } else { return false } }) ?? true else {
            throw call.argumentError(3, "opts.permanent: expected a boolean")
        }
        let permanent = opts["permanent"] == .bool(true)
        if let recorded = SideEffectRecorder.write(call, "delete", collection.rawValue, identifier, nil) { return recorded }
        return try wait(call, "nightscout delete \(collection.rawValue)", {
            try await requireV3(client, for: "delete")
            try await client.delete(collection, identifier: identifier, permanent: permanent)
        }) { stack, _ in
            stack.push(true)
            return 1
        }
    }

    // MARK: Arguments

    static func identifierArgument(_ call: LuaCall, _ n: Int) throws(LuaRaise) -> String {
        let identifier = try call.string(n)
        guard !identifier.isEmpty else { throw call.argumentError(n, "identifier must not be empty") }
        return identifier
    }

    /// Argument `n` as a document to send: a table of named fields, with `app` added when absent,
    /// `date` from the ISO time when only that is given, and an `identifier` when it has none
    /// (the server's own UUID v5 of device, date and event type; random without a date). With
    /// `now` (a new document), one without any time gets `now` as `date` and ISO time, as
    /// `upload_treatment` does: API v3 refuses a document without a date (400 "Bad or missing
    /// date field") while v1 dates it itself.
    static func document(_ call: LuaCall, _ n: Int, collection: V3Collection, identifier: String? = nil,
                         now: Date? = nil) throws(LuaRaise) -> QueuedDocument
    {
        guard case .object(var fields) = try call.value(n, name: "doc"), !fields.isEmpty else {
            throw call.argumentError(n, "doc: expected a table of named fields")
        }
        if fields["app"] == nil { fields["app"] = .text(appName) }
        if let identifier { fields["identifier"] = .text(identifier) }
        if fields["date"] == nil, let iso = fields[NightscoutDocuments.isoField(collection)]?.text,
           let parsed = NightscoutDate(string: iso) {
            fields["date"] = .int(parsed.epochMilliseconds)
        }
        if let now, fields["date"] == nil, fields[NightscoutDocuments.isoField(collection)] == nil {
            let stamp = NightscoutDate(now)
            fields["date"] = .int(stamp.epochMilliseconds)
            fields[NightscoutDocuments.isoField(collection)] = .text(stamp.isoString)
        }
        return try queued(call, fields, argument: n)
    }

    /// The fields with an `identifier` (given, or made), encoded.
    static func queued(_ call: LuaCall, _ fields: [String: LuaValue], argument n: Int) throws(LuaRaise) -> QueuedDocument {
        var fields = fields
        let identifier: String
        if let given = fields["identifier"] {
            guard let text = given.text, !text.isEmpty else { throw call.argumentError(n, "identifier: expected a non-empty string") }
            identifier = text
        } else if let date = fields["date"]?.int {
            identifier = NightscoutIdentifier.compute(device: fields["device"]?.text, date: date, eventType: fields["eventType"]?.text)
        } else {
            identifier = UUID().uuidString.lowercased()
        }
        fields["identifier"] = .text(identifier)
        return QueuedDocument(identifier: identifier, body: try encode(call, .object(fields), argument: n))
    }

    /// JSON text of a value, by the same codec as `json.encode`.
    static func encode(_ call: LuaCall, _ value: LuaValue, argument n: Int) throws(LuaRaise) -> Data {
        call.stack.push(value)
        defer { call.stack.pop() }
        do {
            return Data(try LuaJSONCodec.encode(call.stack, at: -1))
        } catch {
            throw call.argumentError(n, "not JSON-encodable: \(error.message)")
        }
    }

    /// `home:upload_bg{sgv=…, date=…, direction=…|slope=…, device=…, raw=…}` as xDrip4iOS uploads
    /// it (seed 001): an `sgv` entry with both time forms, the direction (given, or from the slope
    /// in mg/dL per minute), filtered/unfiltered and a v3 identifier.
    static func bgReading(_ call: LuaCall, _ n: Int) throws(LuaRaise) -> QueuedDocument {
        let opts = try call.options(n)
        let known: Set<String> = ["sgv", "date", "direction", "slope", "device", "raw"]
        if let unknown = opts.keys.sorted().first(where: { !known.contains($0) }) {
            throw call.argumentError(n, "unknown field '\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
        }
        guard let sgv = opts["sgv"]?.double, sgv.isFinite, (1...1000).contains(sgv) else {
            throw call.argumentError(n, "sgv: expected a glucose value in mg/dL (1 to 1000)")
        }
        guard let dateValue = opts["date"] else { throw call.argumentError(n, "date: required (epoch ms or ISO string)") }
        let date: Date
        do throws(LuaRaise) { date = try NightscoutTimeArgument.date(dateValue, what: "date") } catch {
            throw call.argumentError(n, error.message)
        }
        var slope: Double?
        if let s = opts["slope"] {
            guard let d = s.double, d.isFinite else { throw call.argumentError(n, "slope: expected mg/dL per minute") }
            slope = d
        }
        var raw: Double?
        if let r = opts["raw"] {
            guard let d = r.double, d.isFinite, d >= 0 else { throw call.argumentError(n, "raw: expected a non-negative number") }
            raw = d
        }
        let device: String?
        switch opts["device"] {
        case nil: device = nil
        case let value?:
            guard let text = value.text else { throw call.argumentError(n, "device: expected a string") }
            device = text
        }
        let ms = NightscoutTimeArgument.milliseconds(date)
        var entry = Entry.bgReadingUpload(
            id: NightscoutIdentifier.compute(device: device ?? "", date: ms), device: device, timestamp: date,
            calculatedValue: sgv, rawValue: raw, slopeMgdlPerMinute: slope)
        entry.common.identifier = entry.common.id
        entry.common.id = nil
        entry.common.app = appName
        if let direction = opts["direction"] {
            guard let text = direction.text, !text.isEmpty else { throw call.argumentError(n, "direction: expected a string such as \"Flat\"") }
            entry.direction = TrendDirection(rawValue: text)
        }
        do {
            return QueuedDocument(identifier: entry.common.identifier!, body: try JSONEncoder().encode(entry))
        } catch {
            throw call.argumentError(n, "cannot encode the entry: \(error)")
        }
    }

    /// `home:upload_treatment{eventType=…, …}`: a treatment with `created_at` (given as
    /// `created_at` or `date`, default now), `date`, `enteredBy` and `app` filled in, and its
    /// amounts checked.
    static func treatment(_ call: LuaCall, _ n: Int) throws(LuaRaise) -> QueuedDocument {
        guard case .object(var fields) = try call.value(n, name: "treatment"), !fields.isEmpty else {
            throw call.argumentError(n, "treatment: expected a table of named fields")
        }
        guard let eventType = fields["eventType"]?.text, !eventType.isEmpty else {
            throw call.argumentError(n, "eventType: required, e.g. \"Correction Bolus\" or \"Carb Correction\"")
        }
        for key in ["insulin", "carbs", "protein", "fat", "duration", "absolute", "rate", "glucose"] {
            guard let value = fields[key] else { continue }
            guard let number = value.double, number.isFinite, number >= 0 else {
                throw call.argumentError(n, "\(key): expected a non-negative number")
            }
        }
        let time: Date
        do throws(LuaRaise) {
            if let given = fields["created_at"] ?? fields["date"] {
                time = try NightscoutTimeArgument.date(given, what: fields["created_at"] != nil ? "created_at" : "date")
            } else {
                time = call.engine.clock.now()
            }
        } catch {
            throw call.argumentError(n, error.message)
        }
        let stamp = NightscoutDate(time)
        fields["created_at"] = .text(stamp.isoString)
        fields["date"] = .int(stamp.epochMilliseconds)
        if fields["enteredBy"] == nil { fields["enteredBy"] = .text(appName) }
        if fields["app"] == nil { fields["app"] = .text(appName) }
        return try queued(call, fields, argument: n)
    }
}
