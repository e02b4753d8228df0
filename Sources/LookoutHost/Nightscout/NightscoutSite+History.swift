import CLua
import Foundation
import Lua
import LuaShim
import NightscoutKit

/// `for doc in home:history("entries", since) do … end`: every change after `since` in server
/// order (`srvModified`), deletions included (`isValid == false`), fetched a page at a time.
extension NightscoutSite {
    /// The iterator, in Lua so that a failed page raises at the loop instead of ending it quietly.
    /// `fetch()` returns the next page (a list) and whether more may follow, or `nil, err`.
    static let historyIteratorSource = """
        local fetch = ...
        local error = error
        local page, i, more = nil, 0, true
        return function()
          while true do
            if page and i < #page then
              i = i + 1
              return page[i]
            end
            if not more then return nil end
            local p, flag = fetch()
            if p == nil then error(flag, 2) end
            page, i, more = p, 0, flag
          end
        end
        """

    /// The mutable state of one loop (only touched on the Lua thread).
    final class HistoryState {
        var cursor: HistoryCursor
        init(cursor: HistoryCursor) { self.cursor = cursor }
    }

    /// `home:history(collection [, since [, opts]])`: an iterator over documents changed after
    /// `since` (epoch ms or ISO; default: everything). `opts.page` sets the page size (1–1000).
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
        let state = HistoryState(cursor: HistoryCursor(watermark: since))
        let engine = call.engine
        let stack = call.stack
        var source = historyIteratorSource
        let status = source.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { shim_loadtext(stack.L, $0.baseAddress, $0.count, "=[lookout] nightscout.history") }
        }
        guard status == LUA_OK else { throw LuaRaise("nightscout.history: \(stack.string(at: -1) ?? "cannot load the iterator")") }
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
        guard shim_pcall_traceback(stack.L, 1, 1) == LUA_OK else {
            throw LuaRaise("nightscout.history: \(stack.string(at: -1) ?? "cannot create the iterator")")
        }
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
        let L = stack.L
        guard stack.ensure(6) else { return 0 }
        if let failure = NightscoutDocuments.pushPayload(body, api: .v3, stack: stack, engine: engine) {
            return NightscoutDocuments.fail(failure, stack: stack, engine: engine)
        }
        guard lua_type(L, -1) == LUA_TTABLE else {
            stack.pop()
            return NightscoutDocuments.fail("expected a list of documents", stack: stack, engine: engine)
        }
        let page = lua_absindex(L, -1)
        let count = Int(lua_rawlen(L, page))
        let before = state.cursor
        stack.push(LuaValue.array([]))
        let fresh = lua_absindex(L, -1)
        var kept: lua_Integer = 0
        for i in stride(from: 1, through: count, by: 1) {
            lua_rawgeti(L, page, lua_Integer(i))
            guard lua_type(L, -1) == LUA_TTABLE else { stack.pop(); continue }
            var srvModified: Int64?
            if stack.rawField("srvModified", of: -1) == LUA_TNUMBER { srvModified = stack.number(at: -1).flatMap { Int64(exactly: $0) } }
            stack.pop()
            var identifier: String?
            if stack.rawField("identifier", of: -1) == LUA_TSTRING { identifier = stack.string(at: -1) }
            stack.pop()
            if state.cursor.accept(srvModified: srvModified, identifier: identifier) {
                NightscoutDocuments.finish(at: -1, collection: collection, stack: stack)
                kept += 1
                lua_rawseti(L, fresh, kept)
            } else {
                stack.pop()
            }
        }
        shim_remove(L, page)
        // A full page that moved nothing forward (all at one millisecond already seen) would loop.
        let progressed = state.cursor != before || kept > 0
        stack.push(HistoryCursor.hasMore(pageCount: count, limit: limit) && progressed)
        return 2
    }
}
