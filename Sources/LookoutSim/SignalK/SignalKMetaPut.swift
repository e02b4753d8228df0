import Foundation
import LookoutWire

/// Metadata written by clients (signalk-server's `putMetaHandler` in `put.ts`, kept in its base
/// deltas): per context and path, the fields PUT there and the full metadata they make with the
/// schema's (``SignalKMeta``).
actor SignalKMetaStore {
    /// The fields PUT per `context|path` (the base-delta editor's `getMeta`).
    private var overrides: [String: [String: JSONValue]] = [:]
    /// The full metadata per `context|path` after a PUT (schema's, less the fields a whole-meta
    /// PUT dropped, plus the PUT ones).
    private var full: [String: [String: JSONValue]] = [:]

    private static func key(_ context: String, _ path: String) -> String { context + "|" + path }

    /// The metadata of `path` in `context`: what PUTs made of it, else the schema's.
    func meta(context: String, path: String) -> JSONValue? {
        if let f = full[Self.key(context, path)] { return .object(f) }
        return SignalKMeta.lookup(path)
    }

    /// Applies a PUT to `…/<metaPath>/meta` (`key` nil: `value` is the whole meta object) or to
    /// `…/<metaPath>/meta/<key>`; returns the full metadata to announce.
    func put(context: String, metaPath: String, key: String?, value: JSONValue) -> [String: JSONValue] {
        let k = Self.key(context, metaPath)
        let previous = overrides[k]
        var metaValue: [String: JSONValue]
        if let key {
            metaValue = previous ?? [:]
            metaValue[key] = value
        } else {
            metaValue = value.objectValue ?? [:]
        }
        // An empty array (zones) is stored as null.
        for (name, v) in metaValue { if case .array(let a) = v, a.isEmpty { metaValue[name] = .null } }
        overrides[k] = metaValue
        var merged = full[k] ?? SignalKMeta.lookup(metaPath)?.objectValue ?? [:]
        for name in (previous ?? [:]).keys where metaValue[name] == nil { merged[name] = nil }
        for (name, v) in metaValue { merged[name] = v }
        full[k] = merged
        return merged
    }
}

extension SignalKPutRoute {
    /// Whether a dotted PUT path addresses metadata (`…meta` or `…meta.<key>`), as `putPath` picks
    /// `putMetaHandler`.
    static func isMeta(_ path: String) -> Bool {
        let parts = path.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count > 1 && (parts[parts.count - 1] == "meta" || parts[parts.count - 2] == "meta")
    }

    /// A metadata PUT: the metadata is updated and announced at once (a `meta` delta to the
    /// sockets that asked for `sendMeta=all`), and the request answers PENDING (202, `href`) and
    /// completes with 200 once "saved", as signalk-server's handler does after writing its base
    /// deltas file.
    static func putMeta(
        id: String, context: String, path: String, value: JSONValue, user: String?, sim: SignalKSimulator,
        sink: (@Sendable (JSONValue) -> Void)?
    ) async -> JSONValue {
        let auth = sim.authority
        var parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var key: String?
        if parts.last != "meta" { key = parts.removeLast() }
        parts.removeLast()  // "meta"
        let metaPath = parts.joined(separator: ".")
        let vessel = context == "vessels.self" ? sim.selfContext : context
        let merged = await sim.metaStore.put(context: vessel, metaPath: metaPath, key: key, value: value)
        await sim.hub.addMeta(context: vessel, path: metaPath, merged)
        await sim.hub.announceMeta(
            ["context": .string(vessel), "updates": [["meta": [["path": .string(metaPath), "value": .object(merged)]]]]])
        let reply = await auth.addRequest(
            id: id, kind: .put, state: "PENDING", statusCode: 202, message: nil, ip: nil, user: user, sink: sink)
        sink?(reply)
        Task { _ = await auth.completeRequest(id, statusCode: 200, message: nil) }
        return withAction(reply, id)
    }
}

extension SignalKHub {
    /// Metadata a PUT wrote: kept for the path and merged onto its leaf in the full model.
    func addMeta(context: String, path: String, _ meta: [String: JSONValue]) {
        store.addMeta(context: context, path: path, meta)
    }

    /// Sends a `meta` delta to every socket that asked for `sendMeta=all` and sees its context.
    func announceMeta(_ delta: JSONValue) {
        let context = delta["context"]?.stringValue ?? store.selfContext
        for id in conns.keys.sorted() {
            guard let st = conns[id], st.sendMeta, st.access.mayRead else { continue }
            let sees = st.implicit == .all || (st.implicit == .selfOnly && context == store.selfContext)
                || st.subs.contains { $0.matchesContext(context, selfContext: store.selfContext) }
            if sees { st.conn.send(delta) }
        }
    }
}
