import Foundation
import LookoutWire

/// API v1 `find[...]` query parsing (§2.1).
enum NightscoutQuery {
    /// Date field per collection.
    static func dateField(_ col: String) -> String {
        switch col {
        case "entries": return "date"
        case "profile": return "startDate"
        default: return "created_at"
        }
    }

    /// JavaScript `parseInt` (leading integer, else NaN).
    static func parseIntJS(_ s: String) -> JSONValue {
        let t = s.trimmingCharacters(in: .whitespaces)
        var digits = ""
        for (i, ch) in t.enumerated() {
            if ch.isASCII && ch.isNumber { digits.append(ch) } else if i == 0 && (ch == "-" || ch == "+") {
                digits.append(ch)
            } else {
                break
            }
        }
        if let v = Int64(digits) { return .int(v) }
        return .double(.nan)
    }

    /// Parsed query: conditions plus whether a date bound / `_id` was given.
    struct Parsed: Sendable {
        var conditions: [NSCondition] = []
        var constrainsDate = false
        var hasId = false
        var hasFind = false
    }

    enum QueryError: Error { case badDate(String) }

    /// Parses every `find[...]` item of `query` for collection `col`.
    static func parse(_ query: [(String, String)], col: String) throws(QueryError) -> Parsed {
        var p = Parsed()
        let df = dateField(col)
        for (k, v) in query where k.hasPrefix("find[") {
            p.hasFind = true
            var parts: [String] = []
            var rest = Substring(k.dropFirst(4))
            while rest.first == "[", let close = rest.firstIndex(of: "]") {
                parts.append(String(rest[rest.index(after: rest.startIndex)..<close]))
                rest = rest[rest.index(after: close)...]
            }
            guard let field = parts.first, !field.isEmpty else { continue }
            var op = NSOp.eq
            if parts.count > 1, parts[1].hasPrefix("$"), let o = NSOp(rawValue: String(parts[1].dropFirst())) {
                op = o
            } else if parts.count > 1, parts[1] == "$regex" {
                op = .re
            }
            if field == df || field == "dateString" { p.constrainsDate = true }
            if field == "_id" { p.hasId = true }
            var value: JSONValue = .string(v)
            var cond = NSCondition(field: field, op: op, value: value)
            if field == "_id" {
                cond.idAlsoMatchesIdentifier = !NSObjectId.isValid(v)
            } else if col == "entries", ["date", "sgv", "filtered", "unfiltered", "rssi", "noise", "mbg"].contains(field) {
                value = parseIntJS(v)
            } else if col == "treatments", ["insulin", "carbs", "glucose"].contains(field) {
                value = parseIntJS(v)
            } else if field == df, df != "date", Double(v) == nil {
                guard let d = NSDates.parseISO(v.replacingOccurrences(of: " ", with: "+")) else { throw .badDate(v) }
                value = .string(NSDates.iso(d.ms))
            } else if col == "treatments", ["notes", "eventType", "enteredBy"].contains(field), v.hasPrefix("/"),
                let last = v.lastIndex(of: "/"), last != v.startIndex
            {
                let pattern = String(v[v.index(after: v.startIndex)..<last])
                let flags = String(v[v.index(after: last)...])
                cond.op = .re
                cond.values = [.bool(flags.contains("i"))]
                value = .string(pattern)
            }
            if op == .in || op == .nin {
                cond.values = v.split(separator: ",").map { .string(String($0)) }
            }
            cond.value = value
            p.conditions.append(cond)
        }
        return p
    }

    /// Adds the silent 4-day window (§2.1 quirk) when neither the date field, `dateString` nor `_id`
    /// is constrained.
    static func applyDefaultWindow(_ p: inout Parsed, col: String, now: Int64) {
        guard !p.constrainsDate, !p.hasId else { return }
        let since = now - 4 * 86_400_000
        let df = dateField(col)
        let v: JSONValue = df == "date" ? .int(since) : .string(NSDates.iso(since))
        p.conditions.append(NSCondition(field: df, op: .gte, value: v))
    }

    /// Fixed v1 sort: date field descending.
    static func sortDescending(_ docs: [NSDoc], col: String) -> [NSDoc] {
        let df = dateField(col)
        return docs.enumerated().sorted { a, b in
            let c = NSValueOrder.compare(a.element.fields[df], b.element.fields[df])
            if c != 0 { return c > 0 }
            return a.offset > b.offset
        }.map(\.element)
    }
}
