import CLua
import Foundation
import Lua
import NightscoutKit

/// Writing: `create`, `update`, `patch`, `delete`, `upload_bg`, `upload_treatment`.
extension NightscoutSite {
    static var writeMethods: [String: LuaBinding] {
        [
            "create": { call in
                let collection = try collection(call, 1)
                return try create(call, collection, try document(call, 2, collection: collection))
            },
            "update": { call in try update(call) },
            "patch": { call in try patch(call) },
            "delete": { call in try delete(call) },
            "upload_bg": { call in try create(call, .entries, try bgReading(call, 1)) },
            "upload_treatment": { call in try create(call, .treatments, try treatment(call, 1)) },
        ]
    }

    /// The app name written into documents that name none (`app`, required by v3).
    static let appName = "lookout"

    /// What a create answers: `{identifier=…, deduplicated=…, last_modified=…, api=…}`.
    struct Created: Sendable {
        var api: NightscoutAPIVersion
        var identifier: String?
        var deduplicated: Bool
        var lastModified: Int64?

        var luaValue: LuaValue {
            var fields: [String: LuaValue] = ["api": .text(api.rawValue), "deduplicated": .bool(deduplicated)]
            if let identifier { fields["identifier"] = .text(identifier) }
            if let lastModified { fields["last_modified"] = .int(lastModified) }
            return .object(fields)
        }
    }

    /// Creates a document with the API in use (v3 create, which deduplicates; or v1 POST).
    static func create(_ call: LuaCall, _ collection: V3Collection, _ body: Data) throws -> LuaReturn {
        let client = try site(call).client
        return try wait(call, "nightscout create \(collection.rawValue)", {
            switch try await client.resolvedAPI() {
            case .v3:
                let result = try await client.create(collection, json: body)
                return Created(api: .v3, identifier: result.identifier, deduplicated: result.isDeduplicated,
                               lastModified: result.lastModified)
            case .v1:
                guard collection != .settings else {
                    throw NightscoutError.unsupportedCredentials("settings need API v3: configure an access token")
                }
                var array = Data("[".utf8); array.append(body); array.append(Data("]".utf8))
                let answer = try await client.v1JSON("POST", "/" + collection.rawValue, body: array)
                let stored = try? JSONDecoder().decode([JSONValue].self, from: answer)
                return Created(api: .v1, identifier: stored?.first?["_id"]?.stringValue, deduplicated: false)
            }
        }) { stack, created in
            stack.push(created.luaValue)
            return 1
        }
    }

    /// `home:update(collection, identifier, doc)`: replaces a document (v3).
    static func update(_ call: LuaCall) throws -> LuaReturn {
        let client = try site(call).client
        let collection = try collection(call, 1)
        let identifier = try identifierArgument(call, 2)
        let body = try document(call, 3, collection: collection)
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

    /// Argument `n` as a document to send: a table of named fields, with `app` added when absent
    /// and, for v3, `date` from `created_at` when only that is given.
    static func document(_ call: LuaCall, _ n: Int, collection: V3Collection) throws(LuaRaise) -> Data {
        guard case .object(var fields) = try call.value(n, name: "doc"), !fields.isEmpty else {
            throw call.argumentError(n, "doc: expected a table of named fields")
        }
        if fields["app"] == nil { fields["app"] = .text(appName) }
        if fields["date"] == nil, let iso = fields[NightscoutDocuments.isoField(collection)]?.text,
           let parsed = NightscoutDate(string: iso) {
            fields["date"] = .int(parsed.epochMilliseconds)
        }
        return try encode(call, .object(fields), argument: n)
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
    static func bgReading(_ call: LuaCall, _ n: Int) throws(LuaRaise) -> Data {
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
        do { return try JSONEncoder().encode(entry) } catch { throw call.argumentError(n, "cannot encode the entry: \(error)") }
    }

    /// `home:upload_treatment{eventType=…, …}`: a treatment with `created_at` (given as
    /// `created_at` or `date`, default now), `date`, `enteredBy` and `app` filled in, and its
    /// amounts checked.
    static func treatment(_ call: LuaCall, _ n: Int) throws(LuaRaise) -> Data {
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
                time = Date()
            }
        } catch {
            throw call.argumentError(n, error.message)
        }
        let stamp = NightscoutDate(time)
        fields["created_at"] = .text(stamp.isoString)
        fields["date"] = .int(stamp.epochMilliseconds)
        if fields["enteredBy"] == nil { fields["enteredBy"] = .text(appName) }
        if fields["app"] == nil { fields["app"] = .text(appName) }
        return try encode(call, .object(fields), argument: n)
    }
}
