import Foundation
import Lua
import NightscoutKit

/// `for doc in home:history("entries", since) do … end`: every change after `since` in server
/// order (`srvModified`), deletions included (`isValid == false`), fetched a page at a time.
extension NightscoutSite {
    /// The mutable state of one loop (only touched on the Lua thread).
    final class HistoryState {
        var cursor: HistoryCursor
        init(cursor: HistoryCursor) { self.cursor = cursor }
    }

    /// `home:history(collection [, since [, opts]])`: an iterator over documents changed after
    /// `since` (epoch ms or ISO; srvModified greater than it; default: everything). `opts.page`
    /// sets the page size (1–1000).
    static func history(_ call: LuaCall) throws -> LuaReturn {
        let client = try site(call).client
        let collection = try collection(call, 1)
        var since = V3History.beginningOfTime
        if !call.isNil(2) {
            do throws(LuaRaise) {
                since = NightscoutTimeArgument.milliseconds(try NightscoutTimeArgument.date(try call.value(2, name: "since"), what: "since"))
            } catch {
                throw call.argumentError(2, error.message)
            }
        }
        let opts = try call.options(3)
        if let unknown = opts.keys.first(where: { $0 != "page" }) { throw call.argumentError(3, "unknown option '\(unknown)' (known: page)") }
        let limit = try pageSize(call, opts["page"])
        // "Changed after `since`": a document whose srvModified is `since` itself is not
        // repeated, so resuming from the largest srvModified seen (as the stub says) repeats
        // nothing (the server's own `/history/{ms}` is "greater than" too).
        let state = HistoryState(cursor: HistoryCursor(watermark: since == V3History.beginningOfTime ? since : since + 1))
        let engine = call.engine
        let stack = call.stack
        try stack.load(PackageResources.history_iterator_lua, name: "=[lookout] nightscout.history", what: "nightscout.history")
        engine.pushFunction("nightscout.history", on: stack) { call in
            let after = state.cursor.requestValue
            let path = collection.path + "/history/" + String(after)
            return try wait(call, "nightscout history \(collection.rawValue)", {
                try await requireV3(client, for: "history")
                return try await client.v3JSON("GET", path, query: [("limit", String(limit))]).body
            }) { stack, body in
                pushFreshPage(body, state: state, limit: limit, collection: collection, stack: stack, engine: engine)
            }
        }
        try stack.protectedCall(arguments: 1, results: 1, what: "nightscout.history")
        return .values(1)
    }

    /// `opts.page`: 1…1000, default 1000.
    static func pageSize(_ call: LuaCall, _ value: LuaValue?) throws(LuaRaise) -> Int {
        guard let value else { return 1000 }
        guard let p = value.int, p >= 1, p <= 1000 else { throw call.argumentError(3, "opts.page: expected an integer from 1 to 1000") }
        return Int(p)
    }

    /// Pushes the documents of a history page not seen before, and whether to ask for more.
    static func pushFreshPage(_ body: Data, state: HistoryState, limit: Int, collection: V3Collection,
                              stack: LuaStack, engine: LuaEngine) -> Int32 {
        guard stack.ensure(6) else { return 0 }
        if let failure = NightscoutDocuments.pushPayload(body, api: .v3, stack: stack, engine: engine) {
            return NightscoutDocuments.fail(failure, stack: stack, engine: engine)
        }
        guard stack.kind(at: -1) == .table else {
            stack.pop()
            return NightscoutDocuments.fail("expected a list of documents", stack: stack, engine: engine)
        }
        let page = stack.absolute(-1)
        let count = Int(stack.rawLength(at: page))
        let before = state.cursor
        stack.push(LuaValue.array([]))
        let fresh = stack.absolute(-1)
        var kept = 0, dropped = 0
        var reason: String?
        for i in stride(from: 1, through: count, by: 1) {
            stack.rawIndex(i, of: page)
            guard stack.kind(at: -1) == .table else { stack.pop(); continue }
            var srvModified: Int64?
            if stack.rawField("srvModified", of: -1) == .number { srvModified = stack.number(at: -1).flatMap { Int64(exactly: $0) } }
            stack.pop()
            var identifier: String?
            if stack.rawField("identifier", of: -1) == .string { identifier = stack.string(at: -1) }
            stack.pop()
            if state.cursor.accept(srvModified: srvModified, identifier: identifier) {
                if let why = NightscoutDocuments.unusable(at: -1, stack: stack) {
                    stack.pop()
                    dropped += 1
                    reason = reason ?? why
                    continue
                }
                NightscoutDocuments.finish(at: -1, collection: collection, stack: stack)
                kept += 1
                stack.setIndex(Int(kept), in: fresh)
            } else {
                stack.pop()
            }
        }
        stack.remove(at: page)
        NightscoutDocuments.warnDropped(dropped, of: kept + dropped, collection: collection, reason: reason, engine: engine)
        // A full page that moved nothing forward (all at one millisecond already seen) would loop.
        let progressed = state.cursor != before || kept > 0
        stack.push(HistoryCursor.hasMore(pageCount: count, limit: limit) && progressed)
        return 2
    }
}
