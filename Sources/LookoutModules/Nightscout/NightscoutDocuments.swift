import Foundation
import Lua
import NightscoutKit

/// Server answers as Lua tables: bodies are decoded by the C JSON codec, so every field keeps the
/// server's name and exact value; then each document gets both forms of its time.
enum NightscoutDocuments {
    /// Undecoded answers of one read, and the API that gave them.
    struct Bodies: Sendable {
        /// v1 bodies are JSON arrays or objects; v3 bodies are `{status, result}` envelopes.
        var api: NightscoutAPIVersion
        var bodies: [Data]
    }

    /// The ISO field of a collection's documents: `dateString` for entries, else `created_at`.
    static func isoField(_ collection: V3Collection) -> String { collection == .entries ? "dateString" : "created_at" }

    /// The fields that hold a time in epoch milliseconds.
    static let timeFields: Set<String> = ["date", "mills", "srvModified", "srvCreated"]

    /// Why the document at `index` must not reach a script, or nil: a top-level number that is
    /// not finite (`"sgv": 1e999` decodes to inf, and an alert would read `-inf` as a low), or a
    /// time field beyond the dates a server holds (±8.64e15 ms, a JavaScript date's range).
    static func unusable(at index: Int32, stack: LuaStack) -> String? {
        guard stack.ensure(4) else { return nil }
        let doc = stack.absolute(index)
        stack.pushNil()
        while stack.next(in: doc) {
            if stack.kind(at: -1) == .number, stack.kind(at: -2) == .string, let d = stack.number(at: -1) {
                let key = stack.string(at: -2) ?? "?"
                var reason: String?
                if !d.isFinite {
                    reason = "\(key) is not a finite number (\(d))"
                } else if timeFields.contains(key), abs(d) > 8.64e15 {
                    reason = "\(key) \(d) is beyond any date"
                }
                if let reason {
                    stack.pop(2)
                    return reason
                }
            }
            stack.pop()
        }
        return nil
    }

    /// Writes the warning for documents dropped from one read (nothing when none were).
    static func warnDropped(_ dropped: Int, of total: Int, collection: V3Collection, reason: String?, engine: LuaEngine) {
        guard dropped > 0 else { return }
        engine.options.warnings("nightscout: dropped \(dropped) of \(total) \(collection.rawValue) documents the server sent: "
            + (reason ?? "unusable") + (dropped > 1 ? " (the first)" : ""))
    }

    /// Pushes one array (encoding back as a JSON array even when empty) of every document in
    /// `bodies`, or `nil, err` when a body is not the JSON expected. Documents ``unusable(at:stack:)``
    /// finds unfit are dropped, with a warning that counts them and says why.
    static func pushList(_ answer: Bodies, collection: V3Collection, stack: LuaStack, engine: LuaEngine) -> Int32 {
        guard stack.ensure(6) else { return 0 }
        stack.push(LuaValue.array([]))
        let list = stack.absolute(-1)
        var n = 0, dropped = 0
        var reason: String?
        defer { warnDropped(dropped, of: n + dropped, collection: collection, reason: reason, engine: engine) }
        for body in answer.bodies {
            if let failure = pushPayload(body, api: answer.api, stack: stack, engine: engine) {
                stack.pop()
                return fail(failure, stack: stack, engine: engine)
            }
            guard stack.kind(at: -1) == .table else {
                stack.pop(2)
                return fail("expected a list of documents", stack: stack, engine: engine)
            }
            let page = stack.absolute(-1)
            let count = stack.rawLength(at: page)
            for i in stride(from: 1, through: count, by: 1) {
                stack.rawIndex(i, of: page)
                if stack.kind(at: -1) == .table {
                    if let why = unusable(at: -1, stack: stack) {
                        stack.pop()
                        dropped += 1
                        reason = reason ?? why
                        continue
                    }
                    finish(at: -1, collection: collection, stack: stack)
                }
                n += 1
                stack.setIndex(n, in: list)
            }
            stack.pop()
        }
        return 1
    }

    /// Pushes one document (dates completed when it belongs to a `collection`), or `nil, err` when
    /// the body is not JSON, or when it is `null` or empty (no document: `err.code == "no_data"`
    /// with the message `missing`).
    static func pushDocument(_ body: Data, api: NightscoutAPIVersion, collection: V3Collection?,
                             missing: String = "the site has no such document", stack: LuaStack, engine: LuaEngine) -> Int32 {
        guard stack.ensure(6) else { return 0 }
        if body.allSatisfy({ [0x20, 0x09, 0x0a, 0x0d].contains($0) }) { return noData(missing, stack: stack, engine: engine) }
        if let failure = pushPayload(body, api: api, stack: stack, engine: engine) {
            return fail(failure, stack: stack, engine: engine)
        }
        switch stack.kind(at: -1) {
        case .table:
            if let collection {
                if let why = unusable(at: -1, stack: stack) {
                    stack.pop()
                    return fail("the server's \(collection.rawValue) document is unusable: \(why)", stack: stack, engine: engine)
                }
                finish(at: -1, collection: collection, stack: stack)
            }
        case .lightUserdata, .nil: stack.pop(); return noData(missing, stack: stack, engine: engine)  // json.null: no document
        default: stack.pop(); return fail("expected a document", stack: stack, engine: engine)
        }
        return 1
    }

    /// Pushes `nil, err` for an answer without a document (`err.code == "no_data"`).
    static func noData(_ message: String, stack: LuaStack, engine: LuaEngine) -> Int32 {
        stack.pushNil()
        engine.push(error: LuaErrorInfo(code: "no_data", message: message, retryable: false, service: "nightscout"), on: stack)
        return 2
    }

    /// Pushes a body's payload (the v3 `result`), or returns why it cannot (pushing nothing).
    static func pushPayload(_ body: Data, api: NightscoutAPIVersion, stack: LuaStack, engine: LuaEngine) -> String? {
        do {
            try LuaJSONCodec.decode([UInt8](body), onto: stack, worker: LuaStack(engine.L))
        } catch {
            return "the server's answer is not JSON (\(error.message))"
        }
        guard api == .v3 else { return nil }
        guard stack.kind(at: -1) == .table else {
            stack.pop()
            return "expected a v3 envelope {status, result}"
        }
        stack.rawField("result", of: -1)
        stack.remove(at: -2)
        return nil
    }

    /// Completes a document of `collection`: both time forms, and for profiles the schedule methods.
    static func finish(at index: Int32, collection: V3Collection, stack: LuaStack) {
        completeDates(at: index, collection: collection, stack: stack)
        if collection == .profile { NightscoutProfileMethods.attach(to: index, stack: stack) }
    }

    /// Adds `date` (epoch ms) from the ISO field, or the ISO field from `date`, when one is missing.
    static func completeDates(at index: Int32, collection: V3Collection, stack: LuaStack) {
        let doc = stack.absolute(index)
        let isoKey = isoField(collection)
        var ms: Int64?
        if stack.rawField("date", of: doc) == .number { ms = stack.number(at: -1).flatMap { Int64(exactly: $0.rounded()) } }
        stack.pop()
        var iso: String?
        if stack.rawField(isoKey, of: doc) == .string { iso = stack.string(at: -1) }
        stack.pop()
        if let ms, iso == nil {
            stack.push(NightscoutDate(epochMilliseconds: ms).isoString)
            stack.setField(isoKey, in: doc)
        } else if ms == nil, let iso, let parsed = NightscoutDate(string: iso) {
            stack.push(parsed.epochMilliseconds)
            stack.setField("date", in: doc)
        }
    }

    /// Pushes `nil, err` for an answer that is not what the API promises.
    static func fail(_ message: String, stack: LuaStack, engine: LuaEngine) -> Int32 {
        stack.pushNil()
        engine.push(error: LuaErrorInfo(code: "invalid_response", message: message, service: "nightscout"), on: stack)
        return 2
    }
}
