import Foundation
import LookoutWire

/// One stored document: its Mongo-style `_id` and its fields (everything but `_id`).
struct NSDoc: Sendable, Equatable {
    var oid: String
    var fields: [String: JSONValue]

    /// v3 identifier: the stored `identifier` or, for v1 docs, the `_id` hex.
    var identifier: String { fields["identifier"]?.stringValue ?? oid }
    /// True unless soft-deleted.
    var isValid: Bool { fields["isValid"] != .bool(false) }
    /// True when the document is locked (§3.10).
    var isReadOnly: Bool {
        ["isReadOnly", "readOnly", "readonly"].contains { fields[$0] == .bool(true) }
    }
    /// Stored `srvModified` (v3 writes only).
    var storedSrvModified: Int64? { fields["srvModified"]?.int64Value }
}

/// The collections the simulator knows.
enum NSCollections {
    static let all = ["devicestatus", "entries", "food", "profile", "settings", "treatments"]
}

/// Everything stored; mutated only inside `NightscoutStore.transact`.
struct NSStoreData: Sendable {
    var collections: [String: [NSDoc]] = Dictionary(uniqueKeysWithValues: NSCollections.all.map { ($0, []) })

    func docs(_ c: String) -> [NSDoc] { collections[c] ?? [] }

    func index(_ c: String, where pred: (NSDoc) -> Bool) -> Int? { collections[c]?.firstIndex(where: pred) }

    mutating func insert(_ c: String, _ d: NSDoc) { collections[c, default: []].append(d) }

    /// Virtual srvModified for v1 docs (§3.4): `date` (entries) or `created_at` (others).
    static func virtualTime(_ c: String, _ d: NSDoc) -> Int64? {
        if c == "entries", let v = d.fields["date"], let p = NSDates.parseAny(v) { return p.ms }
        if let v = d.fields["created_at"]?.stringValue, let p = NSDates.parseISO(v) { return p.ms }
        if let v = d.fields["date"], let p = NSDates.parseAny(v) { return p.ms }
        return nil
    }

    /// srvModified as v3 reports it (stored or virtual).
    static func effectiveSrvModified(_ c: String, _ d: NSDoc) -> Int64? {
        d.storedSrvModified ?? virtualTime(c, d)
    }
}

/// A collection's documents with a stored `srvModified` in HISTORY order.
struct NSHistoryIndex: Sendable {
    /// One document: its stored `srvModified` and position in `docs`.
    struct Key: Sendable {
        var srvModified: Int64
        var position: Int
    }

    /// The collection as it was when the index was built.
    let docs: [NSDoc]
    /// Ascending by (`srvModified`, position).
    let order: [Key]

    init(docs: [NSDoc]) {
        self.docs = docs
        var keys: [Key] = []
        keys.reserveCapacity(docs.count)
        var sorted = true
        for (i, d) in docs.enumerated() {
            guard let sm = d.storedSrvModified else { continue }
            if let last = keys.last, last.srvModified > sm { sorted = false }
            keys.append(Key(srvModified: sm, position: i))
        }
        if !sorted {
            keys.sort { ($0.srvModified, $0.position) < ($1.srvModified, $1.position) }
        }
        order = keys
    }

    /// Whether `current` is the very array this index was built from (same storage, so unchanged).
    func isBuilt(from current: [NSDoc]) -> Bool {
        docs.withUnsafeBufferPointer { a in
            current.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress && a.count == b.count }
        }
    }

    /// The first position in `order` whose `srvModified` satisfies `matches`, which must be
    /// monotone (false then true along ascending `srvModified`).
    func firstMatch(_ matches: (Int64) -> Bool) -> Int {
        var lo = 0, hi = order.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if matches(order[mid].srvModified) { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }
}

/// The data store: one actor holding all collections in memory.
actor NightscoutStore {
    var data = NSStoreData()
    var sqlite: NSSQLitePersistence?
    var nextSeq: Int64 = 1

    /// Opens SQLite persistence: loads what is stored, then writes what is only in memory.
    func open(path: String) throws {
        guard sqlite == nil else { return }
        let p = try NSSQLitePersistence(path: path)
        var (loaded, seq) = try p.load()
        let stored = loaded
        for (c, docs) in data.collections {
            for d in docs where !loaded.docs(c).contains(where: { $0.oid == d.oid }) { loaded.insert(c, d) }
        }
        nextSeq = try p.persist(before: stored, after: loaded, nextSeq: seq)
        seq = nextSeq
        data = loaded
        sqlite = p
    }

    /// Runs `body` atomically on the stored data (and writes the changes through to SQLite).
    func transact<T: Sendable>(_ body: @Sendable (inout NSStoreData) -> T) -> T {
        guard let sqlite else { return body(&data) }
        let before = data
        let r = body(&data)
        if let s = try? sqlite.persist(before: before, after: data, nextSeq: nextSeq) { nextSeq = s }
        return r
    }

    /// Inserts documents as a v1 write would (no server fields).
    func seedV1(_ c: String, _ docs: [[String: JSONValue]], now: Int64) {
        transact { data in
            for var f in docs {
                let oid = f.removeValue(forKey: "_id")?.stringValue.flatMap { NSObjectId.isValid($0) ? $0 : nil }
                data.insert(c, NSDoc(oid: oid ?? NSObjectId.make(), fields: f))
            }
        }
    }

    /// The srvModified-ordered view of each collection HISTORY reads, rebuilt only when the
    /// collection changed since it was built (see `historyIndex`).
    private var historyIndexes: [String: NSHistoryIndex] = [:]

    /// The documents of `c` with a stored `srvModified`, ordered by (`srvModified`, position in
    /// the collection): the order v3 HISTORY returns. Cached per collection; the cache holds the
    /// collection array it was built from, so any later mutation of the collection copies the
    /// array (copy-on-write) and is detected by comparing storage, without sorting per request.
    func historyIndex(_ c: String) -> NSHistoryIndex {
        let docs = data.docs(c)
        if let cached = historyIndexes[c], cached.isBuilt(from: docs) { return cached }
        let index = NSHistoryIndex(docs: docs)
        historyIndexes[c] = index
        return index
    }

    /// Stored docs with `_id`.
    func dump(_ c: String) -> [JSONValue] {
        data.docs(c).map { d in
            var f = d.fields
            f["_id"] = .string(d.oid)
            return .object(f)
        }
    }
}

// MARK: - Filtering and ordering (a small Mongo subset)

/// A comparison operator of v1 `find` and v3 filters.
enum NSOp: String, Sendable {
    case eq, ne, gt, gte, lt, lte, `in`, nin, re
}

/// One field condition.
struct NSCondition: Sendable {
    var field: String
    var op: NSOp
    var value: JSONValue
    /// For `$in`/`$nin`: candidates. For `re`: the pattern.
    var values: [JSONValue] = []
    /// When matching `_id` on v1 UUIDs (§2.1): also match `identifier`.
    var idAlsoMatchesIdentifier = false

    func matches(_ d: NSDoc) -> Bool {
        let actual: JSONValue?
        if field == "_id" {
            if idAlsoMatchesIdentifier, case .string(let s) = value, d.fields["identifier"]?.stringValue == s {
                return op == .eq
            }
            actual = .string(d.oid)
        } else {
            actual = NSValueOrder.lookup(d.fields, field)
        }
        switch op {
        case .eq: return actual.map { NSValueOrder.equal($0, value) } ?? (value == .null)
        case .ne: return !(actual.map { NSValueOrder.equal($0, value) } ?? (value == .null))
        case .gt, .gte, .lt, .lte:
            guard let a = actual, let c = NSValueOrder.compareSameType(a, value) else { return false }
            switch op {
            case .gt: return c > 0
            case .gte: return c >= 0
            case .lt: return c < 0
            default: return c <= 0
            }
        case .in: return actual.map { a in values.contains { NSValueOrder.equal(a, $0) } } ?? values.contains(.null)
        case .nin: return !(actual.map { a in values.contains { NSValueOrder.equal(a, $0) } } ?? values.contains(.null))
        case .re:
            guard case .string(let s)? = actual, let p = value.stringValue,
                let rx = try? NSRegularExpression(pattern: p, options: values.first?.boolValue == true ? [.caseInsensitive] : [])
            else { return false }
            return rx.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil
        }
    }
}

/// Mongo-like comparison of JSON values.
enum NSValueOrder {
    /// Dotted-path lookup (`status.state`).
    static func lookup(_ f: [String: JSONValue], _ path: String) -> JSONValue? {
        if let v = f[path] { return v }
        let parts = path.split(separator: ".").map(String.init)
        guard parts.count > 1 else { return nil }
        var cur: JSONValue = .object(f)
        for p in parts {
            guard let next = cur[p] else { return nil }
            cur = next
        }
        return cur
    }

    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        if let x = a.doubleValue, let y = b.doubleValue { return x == y }
        if case .array(let arr) = a, !(b.arrayValue != nil) { return arr.contains { equal($0, b) } }
        return a == b
    }

    /// Compares numbers with numbers and strings with strings; nil otherwise.
    static func compareSameType(_ a: JSONValue, _ b: JSONValue) -> Int? {
        if let x = a.doubleValue, let y = b.doubleValue { return x < y ? -1 : (x > y ? 1 : 0) }
        if case .string(let x) = a, case .string(let y) = b { return x < y ? -1 : (x > y ? 1 : 0) }
        if case .bool(let x) = a, case .bool(let y) = b { return x == y ? 0 : (x ? 1 : -1) }
        return nil
    }

    private static func rank(_ v: JSONValue?) -> Int {
        switch v {
        case nil, .null?: return 0
        case .int?, .double?: return 1
        case .string?: return 2
        case .object?: return 3
        case .array?: return 4
        case .bool?: return 5
        }
    }

    /// Total order (Mongo BSON type order approximation); missing sorts first.
    static func compare(_ a: JSONValue?, _ b: JSONValue?) -> Int {
        let ra = rank(a), rb = rank(b)
        if ra != rb { return ra < rb ? -1 : 1 }
        if let a, let b, let c = compareSameType(a, b) { return c }
        return 0
    }
}
