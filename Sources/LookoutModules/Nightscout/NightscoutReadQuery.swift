import Foundation
import LookoutConfig
import Lua
import NightscoutKit

/// What a read asks for (`home:entries{…}`, `home:search("treatments", {…})`), checked on the Lua
/// thread and turned into requests for whichever API the client uses.
///
/// Options: `count` (documents, newest first; without it a read bounded by `from` or `last`
/// returns every document in the range, else the collection's default), `from` / `to` (inclusive
/// bounds on the event time, epoch ms or ISO), `last` (a duration back from now, instead of
/// `from`), `sort` / `sort_desc` (a field; v3 only), `skip`, `fields` (a list; v3 only), the
/// shortcut filter of the collection (`type` for entries, `eventType` for treatments), and
/// `find = {field = value | {gte=…, lt=…, ne=…, ["in"]={…}, re=…}, …}` for any other field.
/// Any other key raises (`unknown option 'cnt' (did you mean 'count'?)`): a typo must not become
/// a filter that silently matches nothing.
struct NightscoutReadQuery: Sendable {
    /// The largest `count` a read accepts (pages of 1000 are fetched as needed).
    static let maximumCount = 100_000
    /// Option names that are not filters.
    static let reserved: Set<String> = ["count", "from", "to", "last", "sort", "sort_desc", "skip", "fields", "find"]

    /// The filter a collection accepts as a plain option (`home:entries{type = "sgv"}`).
    static func shortcut(_ collection: V3Collection) -> String? {
        switch collection {
        case .entries: return "type"
        case .treatments: return "eventType"
        default: return nil
        }
    }

    /// The option names a read of `collection` accepts.
    static func known(_ collection: V3Collection) -> [String] {
        (reserved.sorted() + [shortcut(collection)].compactMap { $0 }).sorted()
    }

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
        let known = Self.known(collection)
        if let unknown = opts.keys.sorted().first(where: { !known.contains($0) }) {
            let hint = ConfigWording.suggestion(for: unknown, among: known).map { "did you mean '\($0)'?" }
                ?? "known: \(known.joined(separator: ", ")); filters on other fields go in find = {\(unknown) = …}"
            throw call.argumentError(n, "unknown option '\(unknown)' (\(hint))")
        }
        count = opts["from"] != nil || opts["last"] != nil ? Self.maximumCount : defaultCount
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
        if let key = Self.shortcut(collection), let value = opts[key] {
            do throws(LuaRaise) {
                filters += try Self.filters(field: key, value)
            } catch {
                throw call.argumentError(n, error.message)
            }
        }
        if let find = opts["find"] {
            guard case .object(let fields) = find else {
                throw call.argumentError(n, "opts.find: expected a table of field filters such as {device = \"xDrip\"}")
            }
            for key in fields.keys.sorted() {
                do throws(LuaRaise) {
                    filters += try Self.filters(field: key, fields[key]!, path: "opts.find.")
                } catch {
                    throw call.argumentError(n, error.message)
                }
            }
        }
    }

    /// The filters for one option: `field = value` or `field = {op = value, …}`.
    static func filters(field: String, _ value: LuaValue, path: String = "opts.") throws(LuaRaise) -> [V3Search.Filter] {
        guard !V3Search.reservedNames.contains(field), !field.contains("$") else {
            throw LuaRaise("\(path)\(field): cannot filter on '\(field)'")
        }
        guard case .object(let ops) = value else {
            return [V3Search.Filter(field, .eq, try text(value, what: "\(path)\(field)"))]
        }
        var result: [V3Search.Filter] = []
        for name in ops.keys.sorted() {
            guard let op = V3Search.Operator(rawValue: name) else {
                let known = V3Search.Operator.allCases.map(\.rawValue).joined(separator: ", ")
                throw LuaRaise("\(path)\(field).\(name): unknown operator (known: \(known))")
            }
            let operand = ops[name]!
            if op == .in || op == .nin, case .array(let items) = operand {
                var texts: [String] = []
                for (i, item) in items.enumerated() { texts.append(try text(item, what: "\(path)\(field).\(name)[\(i + 1)]")) }
                result.append(V3Search.Filter(field, op, texts.joined(separator: "|")))
            } else {
                result.append(V3Search.Filter(field, op, try text(operand, what: "\(path)\(field).\(name)")))
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
