import Foundation
import LookoutWire

/// One source's value for one path.
public struct SignalKSourcedValue: Sendable, Hashable {
    /// The value (any JSON; `null` means "source alive, no data").
    public var value: JSONValue
    /// The `$source` reference (`N2000-01.115`, `ttyUSB0.GP`), or `nil` when the update had no source.
    public var sourceRef: String?
    /// The inline source object, when the update carried one (full models give only `pgn`/`sentence`).
    public var source: SignalKSource?
    /// The update's timestamp, if any.
    public var timestamp: Date?

    /// Creates a sourced value.
    public init(value: JSONValue, sourceRef: String? = nil, source: SignalKSource? = nil, timestamp: Date? = nil) {
        self.value = value; self.sourceRef = sourceRef; self.source = source; self.timestamp = timestamp
    }
}

/// Everything known about one path of one context: a value per source, which one is current, and meta.
///
/// **Preferred value rule:** ``current`` is the value from the **most recently applied** update,
/// whatever its source or timestamp. This is what signalk-server does for the top-level `value`
/// of its full model (`fullsignalk.ts` `addValue`), and by default it only streams its own
/// priority winner anyway. All sources stay available in ``bySource``.
public struct SignalKLeaf: Sendable, Hashable {
    /// The absolute context, e.g. `vessels.urn:mrn:imo:mmsi:230099999`.
    public let context: String
    /// The path relative to the context, e.g. `navigation.speedOverGround`.
    public let path: String
    /// Values keyed by `$source` reference; the empty string `""` holds values that came without a source.
    public internal(set) var bySource: [String: SignalKSourcedValue] = [:]
    /// The key into ``bySource`` of the most recently applied value.
    public internal(set) var latestSourceKey: String?
    /// The meta object for this path (`units`, `description`, `zones`, …), if known.
    public internal(set) var meta: JSONValue?

    /// Creates an empty leaf.
    public init(context: String, path: String) { self.context = context; self.path = path }

    /// The absolute key `context.path`.
    public var absolutePath: String { path.isEmpty ? context : context + "." + path }
    /// The preferred (most recently applied) sourced value, or `nil` when only meta is known.
    public var current: SignalKSourcedValue? { latestSourceKey.flatMap { bySource[$0] } }
    /// The preferred value.
    public var value: JSONValue? { current?.value }
    /// The preferred value's timestamp.
    public var timestamp: Date? { current?.timestamp }
    /// The preferred value's `$source` reference.
    public var sourceRef: String? { current?.sourceRef }
    /// The `meta.units` string, if known.
    public var units: String? { meta?["units"]?.stringValue }
}

/// One change produced by applying a delta or a full model: a value (or meta) that was set or cleared.
public struct SignalKChange: Sendable, Hashable {
    /// The absolute context.
    public var context: String
    /// The path relative to the context (after empty-path root merges, the merged member's path).
    public var path: String
    /// The new value (`null` when cleared); for meta changes, the meta object.
    public var value: JSONValue
    /// The source reference of the update, if any.
    public var sourceRef: String?
    /// The update timestamp, if any.
    public var timestamp: Date?
    /// `true` when this is a meta change rather than a value change.
    public var isMeta: Bool
    /// Whether the context is the own vessel (as known when the change was applied).
    public var isSelf: Bool

    /// The absolute key `context.path`.
    public var absolutePath: String { path.isEmpty ? context : context + "." + path }
}

/// The Signal K data model held by a client: a value store keyed by absolute paths.
///
/// Rules:
/// - **Keys** are absolute: `vessels.urn:mrn:imo:mmsi:230099999.navigation.speedOverGround`.
///   Each context is kept apart, so other vessels' (AIS) values can never overwrite self's.
/// - **Self** comes from the hello (``apply(hello:)``), a full model, or ``setSelf(_:)``. Until it is
///   known, deltas without context (or with `vessels.self`) are kept under `vessels.self`, and are moved
///   to the real context when it becomes known. If self changes to a *different* id (a new server),
///   the old self's values are dropped (contract §3.10).
/// - **Relative lookups** (`navigation.speedOverGround`) refer to self. A path starting with
///   `vessels.`, `aircraft.`, `aton.` or `sar.` is absolute; `vessels.self.` is replaced by self.
/// - **Several sources per path** are all kept (``SignalKLeaf/bySource``); the preferred value is the most
///   recently applied one (see ``SignalKLeaf``).
/// - **Empty path** `{"path":"","value":{"name":"X"}}` is merged at the context root: each member
///   becomes its own leaf (`name`), nested objects are merged member by member (`communication.callsignVhf`).
/// - **`null`** is stored as a value (the sensor is alive but has no data), except under
///   `notifications.`, where `null` clears that source's notification; a notification leaf with no
///   source left is removed (its meta, if any, is kept).
/// - **Meta** is stored per path, replaced whole by each meta update (the server always sends full meta).
public struct SignalKDataModel: Sendable {
    /// The own-vessel context (`vessels.urn:…`), once known.
    public private(set) var selfContext: String?
    /// All leaves keyed by absolute path.
    public private(set) var leaves: [String: SignalKLeaf] = [:]
    /// The `sources` tree from the last full model applied, if any.
    public private(set) var sources: JSONValue?
    /// The last hello applied, if any.
    public private(set) var hello: SignalKHello?

    /// Root-level groups that hold contexts.
    public static let contextGroups: Set<String> = ["vessels", "aircraft", "aton", "sar"]

    /// Creates an empty model, optionally with self already known (any form accepted by
    /// ``SignalKContext/selfContext(from:)``).
    public init(selfContext: String? = nil) {
        self.selfContext = selfContext.map(SignalKContext.selfContext(from:))
    }

    // MARK: - Self

    /// Sets the own vessel (`vessels.urn:…` or a bare `urn:…`). Values kept under `vessels.self`
    /// move to the real context; a change to a different id drops the old self's values.
    public mutating func setSelf(_ selfValue: String) {
        let new = SignalKContext.selfContext(from: selfValue)
        if new == SignalKContext.selfAlias || new == selfContext { return }
        if let old = selfContext {
            leaves = leaves.filter { $0.value.context != old }
        }
        selfContext = new
        let placeholders = leaves.values.filter { $0.context == SignalKContext.selfAlias }
        for leaf in placeholders {
            leaves[leaf.absolutePath] = nil
            var moved = SignalKLeaf(context: new, path: leaf.path)
            let key = moved.absolutePath
            if let existing = leaves[key] { moved = existing }
            for (k, v) in leaf.bySource { moved.bySource[k] = v }
            if leaf.latestSourceKey != nil { moved.latestSourceKey = leaf.latestSourceKey }
            if leaf.meta != nil { moved.meta = leaf.meta }
            leaves[key] = moved
        }
    }

    /// Records a hello: sets self from it when present.
    public mutating func apply(hello: SignalKHello) {
        self.hello = hello
        if let s = hello.selfContext { setSelf(s) }
    }

    // MARK: - Deltas

    /// Applies a delta and returns what changed, in order. Never fails.
    @discardableResult
    public mutating func apply(_ delta: SignalKDelta) -> [SignalKChange] {
        let context = delta.resolvedContext(selfContext: selfContext)
        let isSelf = context == (selfContext ?? SignalKContext.selfAlias)
        var changes: [SignalKChange] = []
        for update in delta.updates {
            let ref = update.sourceRef
            for pv in update.values {
                if pv.path.isEmpty, case .object(let members) = pv.value {
                    mergeRoot(members, prefix: "", context: context, ref: ref, update: update, isSelf: isSelf, changes: &changes)
                } else {
                    setValue(pv.value, context: context, path: pv.path, ref: ref, source: update.source,
                             timestamp: update.timestamp, isSelf: isSelf, changes: &changes)
                }
            }
            for m in update.meta {
                let key = m.path.isEmpty ? context : context + "." + m.path
                leaves[key, default: SignalKLeaf(context: context, path: m.path)].meta = m.value
                changes.append(SignalKChange(context: context, path: m.path, value: m.value, sourceRef: ref,
                                        timestamp: update.timestamp, isMeta: true, isSelf: isSelf))
            }
        }
        return changes
    }

    private mutating func mergeRoot(_ members: [String: JSONValue], prefix: String, context: String, ref: String?,
                                    update: SignalKUpdate, isSelf: Bool, changes: inout [SignalKChange]) {
        for (k, v) in members.sorted(by: { $0.key < $1.key }) {
            let path = prefix.isEmpty ? k : prefix + "." + k
            if case .object(let nested) = v, !nested.isEmpty {
                mergeRoot(nested, prefix: path, context: context, ref: ref, update: update, isSelf: isSelf, changes: &changes)
            } else {
                setValue(v, context: context, path: path, ref: ref, source: update.source,
                         timestamp: update.timestamp, isSelf: isSelf, changes: &changes)
            }
        }
    }

    private mutating func setValue(_ value: JSONValue, context: String, path: String, ref: String?, source: SignalKSource?,
                                   timestamp: Date?, isSelf: Bool, changes: inout [SignalKChange]) {
        let key = path.isEmpty ? context : context + "." + path
        let sourceKey = ref ?? ""
        if value.isNull, path.hasPrefix("notifications.") {
            if var leaf = leaves[key] {
                leaf.bySource[sourceKey] = nil
                if leaf.latestSourceKey == sourceKey || leaf.bySource.isEmpty {
                    leaf.latestSourceKey = leaf.bySource.values
                        .max(by: { ($0.timestamp ?? .distantPast) < ($1.timestamp ?? .distantPast) })
                        .map { $0.sourceRef ?? "" }
                }
                leaves[key] = leaf.bySource.isEmpty && leaf.meta == nil ? nil : leaf
            }
        } else {
            let sv = SignalKSourcedValue(value: value, sourceRef: ref, source: source, timestamp: timestamp)
            modify(key, context: context, path: path) { leaf in
                leaf.bySource[sourceKey] = sv
                leaf.latestSourceKey = sourceKey
            }
        }
        changes.append(SignalKChange(context: context, path: path, value: value, sourceRef: ref, timestamp: timestamp,
                                isMeta: false, isSelf: isSelf))
    }

    private mutating func modify(_ key: String, context: String, path: String, _ body: (inout SignalKLeaf) -> Void) {
        body(&leaves[key, default: SignalKLeaf(context: context, path: path)])
    }

    // MARK: - Full model

    /// Applies a full model (`GET /signalk/v1/api/`): sets self from `self` (bare or `vessels.` form),
    /// stores every leaf of every context under `vessels`, `aircraft`, `aton`, `sar` (including each
    /// source listed in a leaf's `values`, with the top-level `value`/`$source` as the preferred one),
    /// static members without a `value` wrapper (`name`, `mmsi`) as source-less values, `meta`, and
    /// the `sources` tree. Throws for a non-object root or a malformed timestamp.
    @discardableResult
    public mutating func applyFullModel(_ json: JSONValue) throws -> [SignalKChange] {
        guard case .object(let root) = json else {
            throw SignalKDecodingError.wrongType(field: "full model", expected: "object", found: json.typeName)
        }
        if let s = root["self"] {
            guard case .string(let selfValue) = s else {
                throw SignalKDecodingError.wrongType(field: "self", expected: "string", found: s.typeName)
            }
            setSelf(selfValue)
        }
        if let src = root["sources"] { sources = src }
        var changes: [SignalKChange] = []
        for (group, groupValue) in root where Self.contextGroups.contains(group) {
            guard case .object(let members) = groupValue else {
                throw SignalKDecodingError.wrongType(field: group, expected: "object", found: groupValue.typeName)
            }
            for (id, tree) in members {
                let context = group + "." + id
                guard case .object(let node) = tree else {
                    throw SignalKDecodingError.wrongType(field: context, expected: "object", found: tree.typeName)
                }
                try walk(node, context: context, prefix: "", isSelf: context == selfContext, changes: &changes)
            }
        }
        return changes
    }

    /// Applies a full model given as raw JSON bytes.
    @discardableResult
    public mutating func applyFullModel(json bytes: UnsafeRawBufferPointer) throws -> [SignalKChange] {
        try applyFullModel(SignalKJSON.parse(bytes))
    }

    private mutating func walk(_ node: [String: JSONValue], context: String, prefix: String, isSelf: Bool,
                               changes: inout [SignalKChange]) throws {
        let loc = { prefix.isEmpty ? context : context + "." + prefix }
        if !prefix.isEmpty, let value = node["value"] {
            try storeFullLeaf(node, value: value, context: context, path: prefix, isSelf: isSelf, changes: &changes)
            return
        }
        if !prefix.isEmpty, let meta = node["meta"], case .object = meta {
            modify(loc(), context: context, path: prefix) { $0.meta = meta }
        }
        for (k, v) in node where !(k == "meta" && !prefix.isEmpty) {
            let path = prefix.isEmpty ? k : prefix + "." + k
            if case .object(let child) = v {
                try walk(child, context: context, prefix: path, isSelf: isSelf, changes: &changes)
            } else {
                setValue(v, context: context, path: path, ref: nil, source: nil, timestamp: nil, isSelf: isSelf,
                         changes: &changes)
            }
        }
    }

    private mutating func storeFullLeaf(_ node: [String: JSONValue], value: JSONValue, context: String, path: String,
                                        isSelf: Bool, changes: inout [SignalKChange]) throws {
        let loc = context + "." + path
        func sourced(_ o: [String: JSONValue], value: JSONValue, ref: String?, at field: String) throws -> SignalKSourcedValue {
            var ts: Date?
            if let t = try Fields.optString(o, "timestamp", at: field + ".timestamp") {
                guard let d = SignalKTimestamp.parse(t) else {
                    throw SignalKDecodingError.invalidTimestamp(field: field + ".timestamp", value: t)
                }
                ts = d
            }
            let pgn = o["pgn"]?.intValue
            let sentence = o["sentence"]?.stringValue
            let source: SignalKSource? = pgn == nil && sentence == nil ? nil : SignalKSource(pgn: pgn, sentence: sentence)
            return SignalKSourcedValue(value: value, sourceRef: ref, source: source, timestamp: ts)
        }
        let topRef = try Fields.optString(node, "$source", at: loc + ".$source")
        let top = try sourced(node, value: value, ref: topRef, at: loc)
        var others: [(String, SignalKSourcedValue)] = []
        if let vals = node["values"], case .object(let bySource) = vals {
            for (ref, entry) in bySource {
                guard case .object(let eo) = entry else {
                    throw SignalKDecodingError.wrongType(field: loc + ".values." + ref, expected: "object", found: entry.typeName)
                }
                others.append((ref, try sourced(eo, value: eo["value"] ?? .null, ref: ref, at: loc + ".values." + ref)))
            }
        }
        let key = loc
        modify(key, context: context, path: path) { leaf in
            for (ref, sv) in others { leaf.bySource[ref] = sv }
            leaf.bySource[topRef ?? ""] = top
            leaf.latestSourceKey = topRef ?? ""
            if let meta = node["meta"], case .object = meta { leaf.meta = meta }
        }
        changes.append(SignalKChange(context: context, path: path, value: value, sourceRef: topRef, timestamp: top.timestamp,
                                isMeta: false, isSelf: isSelf))
    }

    // MARK: - Lookup

    /// Resolves a path to an absolute key: absolute paths (`vessels.…`, `aircraft.…`, `aton.…`, `sar.…`)
    /// are returned as is, `vessels.self.x` and relative paths (`navigation.speedOverGround`) are put
    /// under self. Relative paths resolve under `vessels.self` while self is unknown.
    public func absoluteKey(for path: String) -> String {
        let selfCtx = selfContext ?? SignalKContext.selfAlias
        if path == SignalKContext.selfAlias { return selfCtx }
        if path.hasPrefix("vessels.self.") { return selfCtx + path.dropFirst("vessels.self".count) }
        if let dot = path.firstIndex(of: "."), Self.contextGroups.contains(String(path[..<dot])) { return path }
        return selfCtx + "." + path
    }

    /// The leaf for an absolute or self-relative path (see ``absoluteKey(for:)``).
    public func leaf(_ path: String) -> SignalKLeaf? { leaves[absoluteKey(for: path)] }

    /// The leaf for an explicit context (`vessels.self` allowed) and relative path.
    public func leaf(context: String, path: String) -> SignalKLeaf? {
        let ctx = context == SignalKContext.selfAlias ? (selfContext ?? context) : context
        return leaves[path.isEmpty ? ctx : ctx + "." + path]
    }

    /// The preferred value for an absolute or self-relative path.
    public func value(_ path: String) -> JSONValue? { leaf(path)?.value }

    /// The value a given source reported for a path.
    public func value(_ path: String, source sourceRef: String) -> JSONValue? { leaf(path)?.bySource[sourceRef]?.value }

    /// The meta object for an absolute or self-relative path.
    public func meta(_ path: String) -> JSONValue? { leaf(path)?.meta }

    /// All contexts that have at least one leaf.
    public var contexts: Set<String> { Set(leaves.values.map(\.context)) }

    /// Leaves whose path matches `path` and whose context matches `context` (both ``SignalKPattern``s;
    /// `vessels.self` matches self; `nil` context matches all), sorted by absolute path.
    public func leaves(path: String, context: String? = SignalKContext.selfAlias) -> [SignalKLeaf] {
        let pp = SignalKPattern(path)
        let cp = context.map(SignalKPattern.init)
        return leaves.values
            .filter { SignalKPattern.contextMatches(cp, context: $0.context, selfContext: selfContext) && pp.matches($0.path) }
            .sorted { $0.absolutePath < $1.absolutePath }
    }

    /// Removes every value and meta (self stays known).
    public mutating func removeAll() { leaves.removeAll(); sources = nil }
}

/// A thread-safe value store: an actor around ``SignalKDataModel``. Feed it frames or parsed messages;
/// read values, leaves or a snapshot.
public actor SignalKStore {
    /// The current model. Reading it returns a copy (a consistent snapshot).
    public private(set) var model: SignalKDataModel

    /// Creates an empty store, optionally with self known.
    public init(selfContext: String? = nil) { model = SignalKDataModel(selfContext: selfContext) }

    /// Applies a classified server message: hello sets self, delta updates values; other messages
    /// change nothing. Returns the changes.
    @discardableResult
    public func apply(_ message: SignalKServerMessage) -> [SignalKChange] {
        switch message {
        case .hello(let h): model.apply(hello: h); return []
        case .delta(let d): return model.apply(d)
        default: return []
        }
    }

    /// Applies one delta.
    @discardableResult
    public func apply(_ delta: SignalKDelta) -> [SignalKChange] { model.apply(delta) }

    /// Applies deltas in order (one call for a batch); returns each one's changes.
    @discardableResult
    public func apply(_ deltas: [SignalKDelta]) -> [[SignalKChange]] { deltas.map { model.apply($0) } }

    /// Parses one text frame, applies it, and returns the message (for the caller to handle replies etc.).
    public func ingest(frame text: String) throws -> SignalKServerMessage {
        let m = try SignalKServerMessage.parse(text)
        apply(m)
        return m
    }

    /// Applies a full model (see ``SignalKDataModel/applyFullModel(_:)``).
    @discardableResult
    public func applyFullModel(_ json: JSONValue) throws -> [SignalKChange] { try model.applyFullModel(json) }

    /// Sets self (see ``SignalKDataModel/setSelf(_:)``).
    public func setSelf(_ selfValue: String) { model.setSelf(selfValue) }

    /// The own-vessel context, once known.
    public var selfContext: String? { model.selfContext }

    /// The preferred value for an absolute or self-relative path.
    public func value(_ path: String) -> JSONValue? { model.value(path) }

    /// The leaf for an absolute or self-relative path.
    public func leaf(_ path: String) -> SignalKLeaf? { model.leaf(path) }

    /// Leaves matching a path pattern and context pattern (see ``SignalKDataModel/leaves(path:context:)``).
    public func leaves(path: String, context: String? = SignalKContext.selfAlias) -> [SignalKLeaf] {
        model.leaves(path: path, context: context)
    }

    /// Removes every value and meta.
    public func removeAll() { model.removeAll() }
}
