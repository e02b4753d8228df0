import Foundation
import Lua
import NightscoutKit

/// What a read asks for (`home:entries{…}`, `home:search("treatments", {…})`), checked on the Lua
/// thread and turned into requests for whichever API the client uses.
///
/// Options: `count` (documents, newest first), `from` / `to` (inclusive bounds on the event time,
/// epoch ms or ISO), `last` (a duration back from now, instead of `from`), `sort` / `sort_desc`
/// (a field; v3 only), `skip`, `fields` (a list; v3 only), and any other key filters on that
/// field: a value for equality, or a table of operators `{gte=…, lt=…, ne=…, ["in"]={…}, re=…}`.
struct NightscoutReadQuery: Sendable {
    /// The largest `count` a read accepts (pages of 1000 are fetched as needed).
    static let maximumCount = 100_000
    /// Option names that are not filters.
    static let reserved: Set<String> = ["count", "from", "to", "last", "sort", "sort_desc", "skip", "fields"]

    var collection: V3Collection
    var count: Int
    var from: Date?
    var through: Date?
    var sortField = "date"
    var descending = true
    var skip = 0
    var fields: [String]?
    var filters: [V3Search.Filter] = []

    /// Reads argument `n` of `call` (a table or nil).
    init(_ call: LuaCall, argument n: Int, collection: V3Collection, defaultCount: Int, now: Date) throws(LuaRaise) {
        self.collection = collection
        let opts = try call.options(n)
        func what(_ key: String) -> String { "opts.\(key)" }
        count = defaultCount
        if let value = opts["count"] {
            guard let c = value.int, c >= 1, c <= Int64(Self.maximumCount) else {
                throw call.argumentError(n, "opts.count: expected an integer from 1 to \(Self.maximumCount)")
            }
            count = Int(c)
        }
        do throws(LuaRaise) {
            from = try NightscoutTimeArgument.optionalDate(opts["from"], what: what("from"))
            through = try NightscoutTimeArgument.optionalDate(opts["to"], what: what("to"))
            if let last = opts["last"] {
                guard from == nil else { throw LuaRaise("opts.last and opts.from cannot both be given") }
                from = now.addingTimeInterval(-(try NightscoutTimeArgument.duration(last, what: what("last"))))
            }
        } catch {
            throw call.argumentError(n, error.message)
        }
        if let from, let through, through < from { throw call.argumentError(n, "opts.to is before opts.from") }
        if let sort = opts["sort"] {
            guard let s = sort.text, !s.isEmpty else { throw call.argumentError(n, "opts.sort: expected a field name") }
            sortField = s; descending = false
        }
        if let sort = opts["sort_desc"] {
            guard opts["sort"] == nil else { throw call.argumentError(n, "opts.sort and opts.sort_desc cannot both be given") }
            guard let s = sort.text, !s.isEmpty else { throw call.argumentError(n, "opts.sort_desc: expected a field name") }
            sortField = s; descending = true
        }
        if let value = opts["skip"] {
            guard let s = value.int, s >= 0, s <= Int64(Int32.max) else {
                throw call.argumentError(n, "opts.skip: expected a non-negative integer")
            }
            skip = Int(s)
        }
        if let value = opts["fields"] {
            guard case .array(let items) = value, !items.isEmpty, let names = Optional(items.compactMap(\.text)),
                  names.count == items.count else {
                throw call.argumentError(n, "opts.fields: expected a list of field names")
            }
            fields = names
        }
        for key in opts.keys.sorted() where !Self.reserved.contains(key) {
            do throws(LuaRaise) {
                filters += try Self.filters(field: key, opts[key]!)
            } catch {
                throw call.argumentError(n, error.message)
            }
        }
    }

    /// The filters for one option: `field = value` or `field = {op = value, …}`.
    static func filters(field: String, _ value: LuaValue) throws(LuaRaise) -> [V3Search.Filter] {
        guard !V3Search.reservedNames.contains(field), !field.contains("$") else {
            throw LuaRaise("opts.\(field): cannot filter on '\(field)'")
        }
        guard case .object(let ops) = value else {
            return [V3Search.Filter(field, .eq, try text(value, what: "opts.\(field)"))]
        }
        var result: [V3Search.Filter] = []
        for name in ops.keys.sorted() {
            guard let op = V3Search.Operator(rawValue: name) else {
                let known = V3Search.Operator.allCases.map(\.rawValue).joined(separator: ", ")
                throw LuaRaise("opts.\(field).\(name): unknown operator (known: \(known))")
            }
            let operand = ops[name]!
            if op == .in || op == .nin, case .array(let items) = operand {
                var texts: [String] = []
                for (i, item) in items.enumerated() { texts.append(try text(item, what: "opts.\(field).\(name)[\(i + 1)]")) }
                result.append(V3Search.Filter(field, op, texts.joined(separator: "|")))
            } else {
                result.append(V3Search.Filter(field, op, try text(operand, what: "opts.\(field).\(name)")))
            }
        }
        return result
    }

    /// A filter operand as query text.
    static func text(_ value: LuaValue, what: String) throws(LuaRaise) -> String {
        switch value {
        case .string: if let t = value.text { return t }
        case .int(let i): return String(i)
        case .double(let d) where d.isFinite: return d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .bool(let b): return b ? "true" : "false"
        default: break
        }
        throw LuaRaise("\(what): expected a string, number or boolean, got \(value.typeName)")
    }

    // MARK: Requests

    /// The v3 searches that fetch `count` documents, 1000 at a time.
    func v3Pages() throws -> [V3Search] {
        var pages: [V3Search] = []
        var offset = skip, remaining = count
        while remaining > 0 {
            let limit = min(remaining, 1000)
            pages.append(try V3Search(collection: collection, from: from, through: through, limit: limit, skip: offset,
                                      sortField: sortField, descending: descending, filters: filters, fields: fields))
            offset += limit; remaining -= limit
        }
        return pages
    }

    /// The v1 request (path under `/api/v1` and query items), or an error naming what v1 cannot do.
    func v1Request() throws -> (path: String, query: [(String, String)]) {
        guard let v1 = V1Collection(rawValue: collection.rawValue) else {
            throw NightscoutError.unsupportedCredentials("reading \(collection.rawValue) needs API v3 (an access token)")
        }
        if sortField != "date" || !descending { throw NightscoutError.unsupportedCredentials("sorting needs API v3 (an access token)") }
        if skip > 0 { throw NightscoutError.unsupportedCredentials("skip needs API v3 (an access token)") }
        if fields != nil { throw NightscoutError.unsupportedCredentials("fields needs API v3 (an access token)") }
        let query = try V1Query(collection: v1, from: from ?? Date(timeIntervalSince1970: 0), through: through, count: count)
        var items = query.queryItems
        let countItem = items.removeLast()
        for f in filters {
            switch f.op {
            case .eq: items.append(("find[\(f.field)]", f.value))
            case .ne, .gt, .gte, .lt, .lte: items.append(("find[\(f.field)][$\(f.op.rawValue)]", f.value))
            case .in, .nin, .re: throw NightscoutError.unsupportedCredentials("the '\(f.op.rawValue)' operator needs API v3 (an access token)")
            }
        }
        items.append(countItem)
        return (v1.path, items)
    }
}
