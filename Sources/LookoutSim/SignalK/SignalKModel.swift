import Foundation
import LookoutWire

/// One value of a delta after signalk-server style normalisation (context resolved, `$source`
/// derived, timestamp filled in). Root (empty-path) objects are flattened into one value per key,
/// as signalk-server's subscription manager does (`flattenRootDelta`).
struct SKValue: Sendable {
    var context: String
    var path: String
    var value: JSONValue
    var source: JSONValue?
    var sourceRef: String
    var timestamp: String
    /// Monotonic arrival number (stable order for equal timestamps).
    var seq: Int = 0

    /// The single-update, single-value delta signalk-server sends for subscriptions and replays
    /// (`streambundle.ts` `toDelta`).
    var singleDelta: JSONValue {
        var update: [String: JSONValue] = [
            "$source": .string(sourceRef), "timestamp": .string(timestamp),
            "values": [["path": .string(path), "value": value]],
        ]
        if let source { update["source"] = source }
        return ["context": .string(context), "updates": [.object(update)]]
    }
}

/// Timestamp helpers (RFC 3339 UTC with milliseconds and `Z`).
enum SKTime {
    static func iso(_ d: Date) -> String { NSDates.iso(NSDates.ms(d)) }
    static func parse(_ s: String) -> Date? {
        NSDates.parseISO(s).map { Date(timeIntervalSince1970: Double($0.ms) / 1000) }
    }
}

/// Glob matching as signalk-server does it: `*` becomes `.*`, everything else is literal, anchored.
enum SKGlob {
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern.utf8), t = Array(text.utf8)
        var pi = 0, ti = 0, star = -1, mark = 0
        while ti < t.count {
            if pi < p.count, p[pi] != UInt8(ascii: "*"), p[pi] == t[ti] {
                pi += 1; ti += 1
            } else if pi < p.count, p[pi] == UInt8(ascii: "*") {
                star = pi; mark = ti; pi += 1
            } else if star >= 0 {
                pi = star + 1; mark += 1; ti = mark
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == UInt8(ascii: "*") { pi += 1 }
        return pi == p.count
    }
}

/// The full model, the sources tree and the delta cache of a simulated signalk-server.
struct SignalKStore: Sendable {
    let selfID: String
    var selfContext: String { "vessels." + selfID }
    private(set) var model: [String: JSONValue]
    private(set) var sources: [String: JSONValue] = [:]
    /// Latest value per `context|path|$source`.
    private(set) var cache: [String: SKValue] = [:]
    /// Metadata added at run time (meta PUTs, `meta` in deltas) per `context.path`, merged over
    /// the schema's (the path-metadata registry's runtime entries).
    private(set) var runtimeMeta: [String: [String: JSONValue]] = [:]
    private var seq = 0

    init(selfID: String, staticSelf: [String: JSONValue]) {
        self.selfID = selfID
        var vessel = staticSelf
        vessel["uuid"] = nil
        self.model = ["vessels": .object([selfID: .object(vessel)])]
    }

    /// signalk-server `getSourceId` (`sourceutil.ts`).
    static func sourceRef(_ source: JSONValue?) -> String? {
        guard let s = source?.objectValue, let label = s["label"]?.stringValue else { return nil }
        if let can = s["canName"]?.stringValue { return "\(label).\(can)" }
        if let src = s["src"] { return "\(label).\(src.stringValue ?? src.jsonString)" }
        if s["type"]?.stringValue == "NMEA0183" || s["sentence"] != nil || s["talker"] != nil {
            return "\(label).\(s["talker"]?.stringValue ?? "XX")"
        }
        return label
    }

    /// Normalises a delta (context, `$source`, timestamps) as signalk-server's `handleMessage`
    /// does, merges it into the model and cache, and returns the delta to forward plus its values
    /// (root objects flattened). Returns nil for something that is not a delta.
    mutating func apply(_ delta: JSONValue, now: Date, providerID: String) -> (delta: JSONValue, values: [SKValue])? {
        guard var d = delta.objectValue, let updates = d["updates"]?.arrayValue else { return nil }
        var context = d["context"]?.stringValue ?? selfContext
        if context == "vessels.self" || context == "self" { context = selfContext }
        d["context"] = .string(context)
        var outUpdates: [JSONValue] = []
        var values: [SKValue] = []
        for u in updates {
            guard var update = u.objectValue else { continue }
            update["path"] = nil
            let ts = update["timestamp"]?.stringValue ?? SKTime.iso(now)
            update["timestamp"] = .string(ts)
            let ref = update["$source"]?.stringValue ?? Self.sourceRef(update["source"]) ?? providerID
            update["$source"] = .string(ref)
            let source = update["source"]
            if let source { registerSource(source, ref: ref) }
            for v in update["values"]?.arrayValue ?? [] {
                guard let path = v["path"]?.stringValue else { continue }
                let value = v["value"] ?? .null
                if path.isEmpty, let obj = value.objectValue {
                    mergeRoot(context: context, obj)
                    for (k, sub) in obj.sorted(by: { $0.key < $1.key }) {
                        values.append(record(context, k, sub, source, ref, ts))
                    }
                } else {
                    setLeaf(context: context, path: path, value: value, source: source, ref: ref, timestamp: ts)
                    values.append(record(context, path, value, source, ref, ts))
                }
            }
            for m in update["meta"]?.arrayValue ?? [] {
                guard let path = m["path"]?.stringValue, let meta = m["value"]?.objectValue else { continue }
                addMeta(context: context, path: path, meta)
            }
            outUpdates.append(.object(update))
        }
        d["updates"] = .array(outUpdates)
        return (.object(d), values)
    }

    private mutating func record(
        _ context: String, _ path: String, _ value: JSONValue, _ source: JSONValue?, _ ref: String, _ ts: String
    ) -> SKValue {
        seq += 1
        let v = SKValue(context: context, path: path, value: value, source: source, sourceRef: ref, timestamp: ts, seq: seq)
        cache["\(context)|\(path)|\(ref)"] = v
        return v
    }

    /// Cached values matching the filters, one per (context, path, source), oldest first
    /// (`deltacache.ts` `getCachedDeltasForContexts`).
    func cached(where include: (SKValue) -> Bool) -> [SKValue] {
        cache.values.filter(include).sorted {
            ($0.timestamp, $0.seq) < ($1.timestamp, $1.seq)
        }
    }

    /// Distinct paths seen so far (the stream bundle's keys).
    var knownPaths: Set<String> { Set(cache.values.map(\.path)) }

    /// The full model as `GET /signalk/v1/api/` returns it.
    var fullModel: JSONValue {
        var root = model
        root["self"] = .string(selfContext)
        root["version"] = "0.1.0"
        root["sources"] = .object(sources)
        return .object(root)
    }

    // MARK: metadata

    /// The metadata of a vessel-relative `path` in `context`: the schema's, with what was added at
    /// run time over it (`getMetadata`).
    func metadata(context: String, path: String) -> JSONValue? {
        let schema = SignalKMeta.lookup(vesselKey: Self.splitContext(context) + [path])?.objectValue
        guard let added = runtimeMeta[context + "." + path] else { return schema.map { .object($0) } }
        return .object((schema ?? [:]).merging(added) { _, new in new })
    }

    /// A `meta` entry of a delta or a meta PUT (`addMeta`): kept for the path, and merged onto the
    /// full model's leaf when it holds a value (`mergeLeafMeta`; new fields win).
    mutating func addMeta(context: String, path: String, _ meta: [String: JSONValue]) {
        guard !path.isEmpty else { return }
        runtimeMeta[context + "." + path, default: [:]].merge(meta) { _, new in new }
        let keys = Self.splitContext(context) + path.split(separator: ".").map(String.init)
        guard var leaf = Self.get(model, keys)?.objectValue, leaf["value"] != nil else { return }
        leaf["meta"] = .object((leaf["meta"]?.objectValue ?? [:]).merging(meta) { _, new in new })
        model = Self.set(model, keys, .object(leaf))
    }

    // MARK: model updates

    private static func splitContext(_ c: String) -> [String] {
        guard let dot = c.firstIndex(of: ".") else { return [c] }
        return [String(c[..<dot]), String(c[c.index(after: dot)...])]
    }

    private mutating func mergeRoot(context: String, _ obj: [String: JSONValue]) {
        let keys = Self.splitContext(context)
        var node = Self.get(model, keys)?.objectValue ?? [:]
        for (k, v) in obj { node[k] = v }
        model = Self.set(model, keys, .object(node))
    }

    private mutating func setLeaf(
        context: String, path: String, value: JSONValue, source: JSONValue?, ref: String, timestamp: String
    ) {
        let keys = Self.splitContext(context) + path.split(separator: ".").map(String.init)
        var leaf = Self.get(model, keys)?.objectValue ?? [:]
        if leaf["value"] == nil, let meta = metadata(context: context, path: path)?.objectValue {
            // A leaf's first value brings the path's metadata (`addValue`); what it had wins.
            leaf["meta"] = .object(meta.merging(leaf["meta"]?.objectValue ?? [:]) { _, own in own })
        }
        var entry: [String: JSONValue] = ["value": value, "timestamp": .string(timestamp)]
        if let pgn = source?["pgn"] { entry["pgn"] = pgn }
        if let sentence = source?["sentence"] { entry["sentence"] = sentence }
        var all = leaf["values"]?.objectValue ?? [:]
        if let prev = leaf["$source"]?.stringValue, prev != ref, all.isEmpty {
            var old: [String: JSONValue] = ["value": leaf["value"] ?? .null, "timestamp": leaf["timestamp"] ?? .null]
            if let p = leaf["pgn"] { old["pgn"] = p }
            if let s = leaf["sentence"] { old["sentence"] = s }
            all[prev] = .object(old)
        }
        if !all.isEmpty { all[ref] = .object(entry); leaf["values"] = .object(all) }
        leaf["value"] = value
        leaf["$source"] = .string(ref)
        leaf["timestamp"] = .string(timestamp)
        leaf["pgn"] = entry["pgn"]
        leaf["sentence"] = entry["sentence"]
        model = Self.set(model, keys, .object(leaf))
    }

    private mutating func registerSource(_ source: JSONValue, ref: String) {
        guard let s = source.objectValue, let label = s["label"]?.stringValue else { return }
        var node = sources[label]?.objectValue ?? ["label": .string(label)]
        if let t = s["type"] { node["type"] = t }
        let sub = s["canName"]?.stringValue ?? s["src"].map { $0.stringValue ?? $0.jsonString } ?? s["talker"]?.stringValue
        if let sub {
            var entry = node[sub]?.objectValue ?? [:]
            for (k, v) in s where k != "label" && k != "type" && k != "pgn" { entry[k] = v }
            node[sub] = .object(entry)
        }
        sources[label] = .object(node)
    }

    static func get(_ root: [String: JSONValue], _ keys: [String]) -> JSONValue? {
        var cur: JSONValue = .object(root)
        for k in keys {
            guard let next = cur[k] else { return nil }
            cur = next
        }
        return cur
    }

    static func set(_ root: [String: JSONValue], _ keys: [String], _ value: JSONValue) -> [String: JSONValue] {
        guard let first = keys.first else { return root }
        var r = root
        if keys.count == 1 {
            r[first] = value
        } else {
            r[first] = .object(set(r[first]?.objectValue ?? [:], Array(keys.dropFirst()), value))
        }
        return r
    }
}
