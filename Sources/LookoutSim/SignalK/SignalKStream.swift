import Foundation
import LookoutWire

/// Something to send on one WebSocket.
enum SKOutgoing: Sendable {
    case text(String)
    /// Send a close frame (code, reason) and end the connection.
    case close(UInt16, String?)
}

/// One WebSocket connection as the hub sees it: an outgoing queue drained by the socket's writer.
final class SKConnection: Sendable {
    let id: Int
    let stream: AsyncStream<SKOutgoing>
    private let continuation: AsyncStream<SKOutgoing>.Continuation

    init(id: Int) {
        self.id = id
        (stream, continuation) = AsyncStream<SKOutgoing>.makeStream()
    }

    func send(_ text: String) { continuation.yield(.text(text)) }
    func send(_ v: JSONValue) { continuation.yield(.text(v.jsonString)) }
    func close(_ code: UInt16, _ reason: String?) {
        continuation.yield(.close(code, reason))
        continuation.finish()
    }
    func finish() { continuation.finish() }
}

/// The `subscribe` query parameter (§3.1).
enum SKImplicit: Sendable, Equatable {
    case none, selfOnly, all
}

/// One accepted subscribe row (§3.7), with its per-path throttle state.
struct SignalKSubscription: Sendable {
    enum Mode: Sendable { case instant, debounce(Double), buffer(Double) }
    /// nil = every context.
    var context: String?
    var path: String
    var mode: Mode
    /// debounce: last send time per path key.
    var lastSent: [String: Date] = [:]
    /// buffer: pending values per path key (latest per context:$source:path) and window end.
    var pending: [String: [String: SKValue]] = [:]
    var windowEnd: [String: Date] = [:]

    func matchesContext(_ ctx: String, selfContext: String) -> Bool {
        guard let context else { return true }
        if (context == "vessels.self" || context == "self") && ctx == selfContext { return true }
        return SKGlob.matches(context, ctx)
    }
}

/// What a socket may do, decided at the upgrade (§3.2, §8).
enum SKAccess: Sendable, Equatable {
    /// Security off: everything.
    case open
    /// Security on, a valid token with this permission (`readonly`, `readwrite`, `admin`).
    case granted(permission: String)
    /// Security on, no token: the hello, then no data; client deltas are ignored.
    case anonymous

    var mayRead: Bool { self != .anonymous }
    /// Client deltas need `readwrite` or `admin` when security is on (§8).
    var mayWrite: Bool {
        switch self {
        case .open: return true
        case .granted(let p): return p == "readwrite" || p == "admin"
        case .anonymous: return false
        }
    }
}

/// Per-connection state.
struct SKConnState: Sendable {
    let conn: SKConnection
    var implicit: SKImplicit
    var access: SKAccess = .open
    /// What the `subscribe` query asked for (an anonymous socket gets it once it logs in).
    var wanted: SKImplicit = .none
    /// A WebSocket access request of this socket is pending (§6.2: one at a time).
    var accessPending = false
    var subs: [SignalKSubscription] = []
    /// `sendMeta=all`: meta deltas go before the first value of each path.
    var sendMeta = false
    /// Context-and-path keys whose meta was sent (or found to have none).
    var sentMeta: Set<String> = []
}

/// The generator behind `tick()`.
enum SignalKSource: Sendable {
    case boat(SignalKBoat)
    case playback(SignalKPlayback, rewriteTimestamps: Bool)
}

/// The data hub: model, cache, connections, subscriptions; everything the socket sees goes
/// through here, in order.
actor SignalKHub {
    var store: SignalKStore
    var conns: [Int: SKConnState] = [:]
    private var nextID = 0
    var serverStartID = UUID().uuidString.lowercased()
    let serverVersion: String
    private(set) var deltaCount = 0
    /// Where ticks take their data from (nil: nothing is generated).
    var source: SignalKSource?
    /// Sockets that published a path, by path and `$source` (`ws.ts` `pathSources`): a PUT no
    /// handler serves is forwarded to them (§4.4).
    var pathSources: [String: [String: Int]] = [:]

    init(store: SignalKStore, serverVersion: String) {
        self.store = store
        self.serverVersion = serverVersion
    }

    func hello(now: Date) -> JSONValue {
        [
            "name": "signalk-server", "version": .string(serverVersion), "self": .string(store.selfContext),
            "roles": ["master", "main"], "timestamp": .string(SKTime.iso(now)),
            "serverStartId": .string(serverStartID),
        ]
    }

    /// Registers a socket: hello, then the cached values the `subscribe` mode asks for (§3.3, §3.6).
    /// An `anonymous` socket gets the hello and nothing else.
    func open(subscribe: String?, sendCachedValues: Bool, access: SKAccess = .open, sendMeta: Bool = false, now: Date)
        -> SKConnection
    {
        nextID += 1
        let conn = SKConnection(id: nextID)
        var implicit: SKImplicit
        var replay = sendCachedValues
        switch subscribe {
        case nil, "self": implicit = .selfOnly
        case "none": implicit = .none; replay = false
        case "all": implicit = .all
        default: implicit = .all; replay = false
        }
        conn.send(hello(now: now))
        let wanted = implicit
        if !access.mayRead { (implicit, replay) = (.none, false) }
        var st = SKConnState(conn: conn, implicit: implicit, access: access, wanted: wanted, sendMeta: sendMeta)
        if replay {
            let selfCtx = store.selfContext
            for v in store.cached(where: { implicit == .all || $0.context == selfCtx }) { emit(v.singleDelta, to: &st) }
        }
        conns[conn.id] = st
        return conn
    }

    /// Sends a delta to a socket, after its meta deltas when the socket asked for `sendMeta=all`
    /// (`ws.ts` `sendMetaData`, called before every delta written).
    func emit(_ delta: JSONValue, text: String? = nil, to st: inout SKConnState) {
        if st.sendMeta {
            let store = self.store
            for m in SignalKMeta.metaDeltas(before: delta, sent: &st.sentMeta, metadata: { store.metadata(context: $0, path: $1) }) {
                st.conn.send(m)
            }
        }
        if let text { st.conn.send(text) } else { st.conn.send(delta) }
    }

    /// The access of an open socket.
    func access(of id: Int) -> SKAccess? { conns[id]?.access }

    /// A socket authenticated in place by a WebSocket login or an approved access request
    /// (`authorizeWS`): its permission from now on, and the stream its `subscribe` query asked
    /// for if it could not read before.
    func authorize(_ id: Int, permission: String) {
        guard var st = conns[id] else { return }
        if !st.access.mayRead { st.implicit = st.wanted }
        st.access = .granted(permission: permission)
        conns[id] = st
    }

    /// Marks a WebSocket access request of the socket pending; false when one already is.
    func beginAccessRequest(_ id: Int) -> Bool {
        guard conns[id]?.accessPending == false else { return false }
        conns[id]?.accessPending = true
        return true
    }

    /// The socket's access request is no longer pending.
    func endAccessRequest(_ id: Int) { conns[id]?.accessPending = false }

    func close(_ id: Int) {
        conns[id] = nil
        for path in pathSources.keys { pathSources[path] = pathSources[path]?.filter { $0.value != id } }
    }

    /// Where a PUT to `path` goes when no handler serves it: nil (nobody publishes it), the
    /// socket, or `.failure` when several sources publish it and `source` names none.
    func putTarget(path: String, source: String?) -> Result<SKConnection, SignalKPutForwardError>? {
        guard let sources = pathSources[path], !sources.isEmpty else { return nil }
        if let source {
            guard let id = sources[source] else { return nil }
            return conns[id].map { .success($0.conn) }
        }
        guard sources.count == 1, let id = sources.values.first else { return .failure(.multipleSources) }
        return conns[id].map { .success($0.conn) }
    }

    /// Number of open sockets.
    var connectionCount: Int { conns.count }

    // MARK: data in

    /// Feeds a delta from a provider (the boat, playback, or a client) to the model and streams.
    func publish(_ delta: JSONValue, now: Date, providerID: String, connection: Int? = nil) {
        guard let (normalized, values) = store.apply(delta, now: now, providerID: providerID) else { return }
        if let connection {
            for v in values { pathSources[v.path, default: [:]][v.sourceRef] = connection }
        }
        deltaCount += 1
        // Windows that ended by now are flushed before the new values open the next ones.
        pump(now: now)
        let ctx = normalized["context"]?.stringValue ?? store.selfContext
        let selfCtx = store.selfContext
        let text = normalized.jsonString
        for id in conns.keys.sorted() {
            guard var st = conns[id] else { continue }
            if st.implicit == .all || (st.implicit == .selfOnly && ctx == selfCtx) { emit(normalized, text: text, to: &st) }
            for i in st.subs.indices {
                for v in values where st.subs[i].matchesContext(v.context, selfContext: selfCtx)
                    && SKGlob.matches(st.subs[i].path, v.path)
                {
                    deliver(v, sub: i, st: &st, now: now)
                }
            }
            conns[id] = st
        }
    }

    private func deliver(_ v: SKValue, sub i: Int, st: inout SKConnState, now: Date) {
        switch st.subs[i].mode {
        case .instant:
            emit(v.singleDelta, to: &st)
        case .debounce(let ms):
            if let last = st.subs[i].lastSent[v.path], now.timeIntervalSince(last) * 1000 < ms { return }
            st.subs[i].lastSent[v.path] = now
            emit(v.singleDelta, to: &st)
        case .buffer(let ms):
            if st.subs[i].windowEnd[v.path] == nil { st.subs[i].windowEnd[v.path] = now.addingTimeInterval(ms / 1000) }
            st.subs[i].pending[v.path, default: [:]]["\(v.context):\(v.sourceRef):\(v.path)"] = v
        }
    }

    /// Flushes every buffered (`period`) window that has ended by `now`.
    func pump(now: Date) {
        for id in conns.keys.sorted() {
            guard var st = conns[id] else { continue }
            var changed = false
            for i in st.subs.indices {
                for (key, end) in st.subs[i].windowEnd where end.timeIntervalSince(now) <= 0.001 {
                    for v in (st.subs[i].pending[key] ?? [:]).values.sorted(by: { $0.seq > $1.seq }) {
                        emit(v.singleDelta, to: &st)
                    }
                    st.subs[i].pending[key] = nil
                    st.subs[i].windowEnd[key] = nil
                    changed = true
                }
            }
            if changed { conns[id] = st }
        }
    }

    // MARK: client messages

    static let unsubscribeAll = #"{"context":"*","unsubscribe":[{"path":"*"}]}"#

    /// Handles one text frame from a client (§3.7, §3.8). Invalid JSON is ignored.
    func receive(_ text: String, from id: Int, now: Date) {
        guard let st = conns[id], let msg = try? JSONValue.parse(text), let obj = msg.objectValue else { return }
        if obj["updates"] != nil, st.access.mayWrite {
            publish(msg, now: now, providerID: "ws.\(id)", connection: id)
        }
        if let rows = obj["subscribe"]?.arrayValue, st.access.mayRead {
            subscribe(rows: rows, context: obj["context"], state: st, now: now)
        }
        if obj["unsubscribe"] != nil {
            let rows = obj["unsubscribe"]?.arrayValue ?? []
            if obj["context"]?.stringValue == "*", rows.count == 1, rows[0]["path"]?.stringValue == "*" {
                conns[id]?.subs.removeAll()
                conns[id]?.implicit = .none
            } else {
                st.conn.send(JSONValue.string("Only '\(Self.unsubscribeAll)' supported, received \(msg.jsonString)"))
                st.conn.close(1000, nil)
                conns[id] = nil
            }
        }
    }

    private static func number(_ v: JSONValue?) -> Double? {
        guard let v else { return nil }
        if let d = v.doubleValue { return d }
        if let s = v.stringValue?.trimmingCharacters(in: .whitespaces), let d = Double(s) { return d }
        return nil
    }

    /// The value if JavaScript would treat it as true (not null, false, 0 or "").
    private static func truthy(_ v: JSONValue?) -> JSONValue? {
        switch v {
        case nil, .null?, .bool(false)?, .string("")?: return nil
        case let x? where x.doubleValue == 0: return nil
        case let x?: return x
        }
    }

    private func subscribe(rows: [JSONValue], context: JSONValue?, state: SKConnState, now: Date) {
        let conn = state.conn
        // A radius object (not supported) gets a pattern no context matches.
        let ctx: String? =
            context.map { $0.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? ($0 == .null ? nil : "\u{0}") } ?? nil
        let selfCtx = store.selfContext
        var subs = conns[conn.id]?.subs ?? []
        var meta = conns[conn.id] ?? state
        let known = store.knownPaths.sorted()
        for row in rows {
            guard let path = row["path"]?.stringValue else { continue }
            let policy = Self.truthy(row["policy"]).map { $0.stringValue ?? $0.jsonString }
            var mode = SignalKSubscription.Mode.instant
            var warnings: [String] = []
            let hasMinPeriod = Self.truthy(row["minPeriod"]) != nil
            let hasPeriod = Self.truthy(row["period"]) != nil
            if hasMinPeriod {
                if let policy, policy != "instant" {
                    warnings.append("minPeriod assumes policy 'instant', ignoring policy \(policy)")
                }
                if let ms = Self.number(row["minPeriod"]) {
                    mode = .debounce(ms)
                } else {
                    let raw = row["minPeriod"]!
                    warnings.append("invalid minPeriod value '\(raw.stringValue ?? raw.jsonString)', ignoring")
                }
            } else if hasPeriod || policy == "fixed" {
                if let policy, policy != "fixed" {
                    warnings.append("period assumes policy 'fixed', ignoring policy \(policy)")
                } else {
                    let ms = Self.number(row["period"]).flatMap { $0 > 0 ? $0 : nil } ?? 1000
                    mode = .buffer(ms)
                }
            }
            if let format = Self.truthy(row["format"]), format.stringValue != "delta" {
                warnings.append("Only delta format supported, using it")
            }
            if let policy, policy != "instant", policy != "fixed" {
                warnings.append("Only 'instant' and 'fixed' policies supported, ignoring policy \(policy)")
            }
            // Warnings go out once per matching stream-bundle key (none when nothing matches yet);
            // then the cached values of every matching (context, path) are replayed, oldest first.
            let keys = known.filter { SKGlob.matches(path, $0) }
            for _ in keys { for w in warnings { conn.send(JSONValue.string(w)) } }
            let sub = SignalKSubscription(context: ctx, path: path, mode: mode)
            subs.append(sub)
            for v in store.cached(where: { SKGlob.matches(path, $0.path) && sub.matchesContext($0.context, selfContext: selfCtx) }) {
                emit(v.singleDelta, to: &meta)
            }
        }
        conns[conn.id]?.subs = subs
        conns[conn.id]?.sentMeta = meta.sentMeta
    }

    // MARK: faults

    /// Closes every socket (going away) and forgets them.
    func dropAll(code: UInt16 = 1001, reason: String? = nil) {
        for st in conns.values { st.conn.close(code, reason) }
        conns.removeAll()
    }

    /// Drops every socket and takes a new `serverStartId`, so reconnecting clients see a restart.
    func restart() {
        dropAll(code: 1012, reason: "Server restart")
        serverStartID = UUID().uuidString.lowercased()
    }

    /// Sends a truncated JSON text frame to every socket.
    func sendMalformed() {
        for st in conns.values { st.conn.send(#"{"context":"vessels.self","updates":[{"values":[{"path":"#) }
    }
}

extension SignalKHub {
    /// One step of the data source: `dt` seconds of boat movement (or the next recorded delta),
    /// published at `now`; then flushes ended `period` windows.
    func tick(dt: Double, now: Date) {
        switch source {
        case .boat(var boat):
            let delta = boat.step(dt: dt, timestamp: SKTime.iso(now))
            source = .boat(boat)
            publish(delta, now: now, providerID: "simulator")
        case .playback(var playback, let rewrite):
            var delta = playback.next()
            source = .playback(playback, rewriteTimestamps: rewrite)
            if rewrite, var d = delta.objectValue, let ups = d["updates"]?.arrayValue {
                let ts = JSONValue.string(SKTime.iso(now))
                d["updates"] = .array(ups.map { u in
                    guard var o = u.objectValue else { return u }
                    o["timestamp"] = ts
                    return .object(o)
                })
                delta = .object(d)
            }
            publish(delta, now: now, providerID: "playback")
        case nil:
            pump(now: now)
        }
    }
}
