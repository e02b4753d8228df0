import Foundation
import LookoutWire

/// Helpers for Signal K contexts (`vessels.urn:mrn:imo:mmsi:230099999`, `aton.…`, `vessels.self`).
public enum SignalKContext {
    /// The alias for the own vessel accepted in subscriptions, REST paths and PUTs.
    public static let selfAlias = "vessels.self"

    /// Turns a `self` value from a hello, a full model, `/signalk/v1/api/self` or mDNS into a context:
    /// `vessels.urn:…` is kept, a bare `urn:…` gets the `vessels.` prefix.
    public static func selfContext(from selfValue: String) -> String {
        selfValue.hasPrefix("vessels.") ? selfValue : "vessels." + selfValue
    }

    /// Splits a context at the **first** dot only (identifiers such as URLs contain dots):
    /// `vessels.https://a.b` → (`vessels`, `https://a.b`). `nil` when there is no dot.
    public static func split(_ context: String) -> (group: String, id: String)? {
        guard let dot = context.firstIndex(of: ".") else { return nil }
        return (String(context[..<dot]), String(context[context.index(after: dot)...]))
    }
}

/// A data source as given inline in a delta update (`source`), e.g. `{"label":"N2000-01","type":"NMEA2000","src":"115","pgn":128267}`.
public struct SignalKSource: Sendable, Hashable {
    /// The source label (connection or provider name), e.g. `N2000-01` or `ttyUSB0`.
    public var label: String?
    /// The source type, e.g. `NMEA2000`, `NMEA0183`, `signalk`.
    public var type: String?
    /// NMEA 2000 source address, always as a string (numbers on the wire are converted).
    public var src: String?
    /// NMEA 2000 PGN.
    public var pgn: Int?
    /// NMEA 2000 CAN name.
    public var canName: String?
    /// Device instance, as a string.
    public var instance: String?
    /// NMEA 0183 sentence, e.g. `RMC`.
    public var sentence: String?
    /// NMEA 0183 talker id, e.g. `GP`.
    public var talker: String?
    /// Members not modelled above (e.g. `deviceInstance`, `manufacturerCode`), as received.
    public var extra: [String: JSONValue]

    /// Creates a source from its fields.
    public init(label: String? = nil, type: String? = nil, src: String? = nil, pgn: Int? = nil,
                canName: String? = nil, instance: String? = nil, sentence: String? = nil,
                talker: String? = nil, extra: [String: JSONValue] = [:]) {
        self.label = label; self.type = type; self.src = src; self.pgn = pgn; self.canName = canName
        self.instance = instance; self.sentence = sentence; self.talker = talker; self.extra = extra
    }

    /// The `$source` reference signalk-server derives for this source (`sourceutil.ts` `getSourceId`):
    /// `label.canName`, else `label.src`, else `label.talker`, else `label.XX` for NMEA 0183 without
    /// talker, else `label`. `nil` without a label.
    public var derivedRef: String? {
        guard let label else { return nil }
        if let canName { return label + "." + canName }
        if let src { return label + "." + src }
        if let talker { return label + "." + talker }
        if type == "NMEA0183" { return label + ".XX" }
        return label
    }
}

/// One `{path, value}` entry of an update's `values`.
public struct SignalKPathValue: Sendable, Hashable {
    /// The path relative to the delta's context; `""` means "merge `value` (an object) at the context root".
    public var path: String
    /// The value; may be any JSON type, including `null`.
    public var value: JSONValue
    /// Creates an entry.
    public init(path: String, value: JSONValue) { self.path = path; self.value = value }
}

/// One `{path, value}` entry of an update's `meta`: the full meta object for that path.
public struct SignalKMetaEntry: Sendable, Hashable {
    /// The path the meta describes, relative to the context.
    public var path: String
    /// The meta object (`units`, `description`, `displayName`, `zones`, …).
    public var value: JSONValue
    /// Creates an entry.
    public init(path: String, value: JSONValue) { self.path = path; self.value = value }
}

/// One element of a delta's `updates`. `source`, `$source` and `timestamp` apply to all its values and meta.
public struct SignalKUpdate: Sendable, Hashable {
    /// The inline source object, if any.
    public var source: SignalKSource?
    /// The `$source` string as sent, if any (signalk-server sends it together with `source`).
    public var dollarSource: String?
    /// The update's timestamp (RFC 3339 parsed), if any.
    public var timestamp: Date?
    /// The value entries (empty for a meta-only update).
    public var values: [SignalKPathValue]
    /// The meta entries (empty for most updates).
    public var meta: [SignalKMetaEntry]

    /// Creates an update.
    public init(source: SignalKSource? = nil, dollarSource: String? = nil, timestamp: Date? = nil,
                values: [SignalKPathValue] = [], meta: [SignalKMetaEntry] = []) {
        self.source = source; self.dollarSource = dollarSource; self.timestamp = timestamp
        self.values = values; self.meta = meta
    }

    /// The source reference to key values by: `$source` when present, else derived from `source`
    /// (``SignalKSource/derivedRef``), else `nil`.
    public var sourceRef: String? { dollarSource ?? source?.derivedRef }
}

/// A Signal K delta: `{context?, updates:[…]}`.
public struct SignalKDelta: Sendable, Hashable {
    /// The context as sent. `nil` (absent) means self, as does `vessels.self`.
    public var context: String?
    /// The updates, in wire order.
    public var updates: [SignalKUpdate]

    /// Creates a delta.
    public init(context: String? = nil, updates: [SignalKUpdate]) { self.context = context; self.updates = updates }

    /// The absolute context: an absent context or `vessels.self` becomes `selfContext`
    /// (or `vessels.self` when self is not known yet); any other context is returned as is.
    public func resolvedContext(selfContext: String?) -> String {
        guard let context, context != SignalKContext.selfAlias, context != "self" else {
            return selfContext ?? SignalKContext.selfAlias
        }
        return context
    }

    /// Parses a delta from raw JSON bytes (strict). Throws ``SignalKDecodingError``.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws -> SignalKDelta {
        let m = try SignalKServerMessage.parseFast(bytes)
        guard case .delta(let d) = m else {
            throw SignalKDecodingError.unexpectedMessage(expected: "delta", reason: "no \"updates\" member")
        }
        return d
    }

    /// Parses a delta from JSON text.
    public static func parse(_ text: String) throws -> SignalKDelta {
        var text = text
        return try text.withUTF8 { try parse(UnsafeRawBufferPointer($0)) }
    }

    /// Parses a delta from `Data`.
    public static func parse(_ data: Data) throws -> SignalKDelta { try data.withUnsafeBytes { try parse($0) } }

    /// Builds a delta from an already parsed JSON value, checking every field.
    public init(json: JSONValue) throws {
        guard case .object(let o) = json else {
            throw SignalKDecodingError.wrongType(field: "delta", expected: "object", found: json.typeName)
        }
        try self.init(object: o)
    }

    init(object o: [String: JSONValue]) throws {
        context = try Fields.optString(o, "context", at: "context")
        guard let updatesValue = o["updates"] else { throw SignalKDecodingError.missingField(field: "updates") }
        guard case .array(let arr) = updatesValue else {
            throw SignalKDecodingError.wrongType(field: "updates", expected: "array", found: updatesValue.typeName)
        }
        var updates: [SignalKUpdate] = []
        updates.reserveCapacity(arr.count)
        for (n, u) in arr.enumerated() {
            updates.append(try Self.decodeUpdate(u, at: "updates[\(n)]"))
        }
        self.updates = updates
    }

    static func decodeUpdate(_ v: JSONValue, at loc: @autoclosure () -> String) throws -> SignalKUpdate {
        guard case .object(let u) = v else {
            throw SignalKDecodingError.wrongType(field: loc(), expected: "object", found: v.typeName)
        }
        var update = SignalKUpdate()
        if let s = u["source"] {
            switch s {
            case .object(let so): update.source = try SignalKSource(object: so, at: loc() + ".source")
            case .null: break
            default: throw SignalKDecodingError.wrongType(field: loc() + ".source", expected: "object", found: s.typeName)
            }
        }
        update.dollarSource = try Fields.optString(u, "$source", at: loc() + ".$source")
        if let ts = try Fields.optString(u, "timestamp", at: loc() + ".timestamp") {
            guard let d = SignalKTimestamp.parse(ts) else {
                throw SignalKDecodingError.invalidTimestamp(field: loc() + ".timestamp", value: ts)
            }
            update.timestamp = d
        }
        // Non-spec fallback: an update-level path used when a value entry has none.
        let updatePath = try Fields.optString(u, "path", at: loc() + ".path")
        if let vals = u["values"] {
            guard case .array(let arr) = vals else {
                throw SignalKDecodingError.wrongType(field: loc() + ".values", expected: "array", found: vals.typeName)
            }
            update.values.reserveCapacity(arr.count)
            for (k, e) in arr.enumerated() {
                guard case .object(let eo) = e else {
                    throw SignalKDecodingError.wrongType(field: loc() + ".values[\(k)]", expected: "object", found: e.typeName)
                }
                guard let path = try Fields.optString(eo, "path", at: loc() + ".values[\(k)].path") ?? updatePath else {
                    continue  // spec: no path at either level → drop the entry
                }
                guard let value = eo["value"] else {
                    throw SignalKDecodingError.missingField(field: loc() + ".values[\(k)].value")
                }
                update.values.append(SignalKPathValue(path: path, value: value))
            }
        }
        if let metas = u["meta"] {
            guard case .array(let arr) = metas else {
                throw SignalKDecodingError.wrongType(field: loc() + ".meta", expected: "array", found: metas.typeName)
            }
            for (k, e) in arr.enumerated() {
                guard case .object(let eo) = e else {
                    throw SignalKDecodingError.wrongType(field: loc() + ".meta[\(k)]", expected: "object", found: e.typeName)
                }
                guard let path = try Fields.optString(eo, "path", at: loc() + ".meta[\(k)].path") ?? updatePath else {
                    continue
                }
                guard let value = eo["value"] else {
                    throw SignalKDecodingError.missingField(field: loc() + ".meta[\(k)].value")
                }
                update.meta.append(SignalKMetaEntry(path: path, value: value))
            }
        }
        return update
    }
}

extension SignalKSource {
    static let modelledKeys: Set<String> = ["label", "type", "src", "pgn", "canName", "instance", "sentence", "talker"]

    /// Sets a modelled field from a JSON value, or returns `false` for a key that is not modelled.
    mutating func set(_ key: String, _ v: JSONValue, at loc: @autoclosure () -> String) throws -> Bool {
        func str() throws -> String? {
            switch v {
            case .null: return nil
            case .string(let s): return s
            case .int(let i): return String(i)
            case .double(let d): return d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
            default: throw SignalKDecodingError.wrongType(field: loc() + "." + key, expected: "string", found: v.typeName)
            }
        }
        switch key {
        case "label": label = try str()
        case "type": type = try str()
        case "src": src = try str()
        case "canName": canName = try str()
        case "instance": instance = try str()
        case "sentence": sentence = try str()
        case "talker": talker = try str()
        case "pgn":
            switch v {
            case .null: pgn = nil
            case .string(let s): pgn = Int(s)
            default:
                guard let i = v.intValue else {
                    throw SignalKDecodingError.wrongType(field: loc() + ".pgn", expected: "integer", found: v.typeName)
                }
                pgn = i
            }
        default: return false
        }
        return true
    }
    /// Builds a source from a JSON object; `src`, `instance` and `pgn` accept strings or numbers.
    init(object o: [String: JSONValue], at loc: @autoclosure () -> String) throws {
        self.init()
        for (k, v) in o where try !set(k, v, at: loc()) { extra[k] = v }
    }
}

/// The hello a server sends as the first WebSocket frame.
public struct SignalKHello: Sendable, Hashable {
    /// Server name (`signalk-server` for signalk-server).
    public var name: String?
    /// Server version (signalk-server: its package version, e.g. `2.31.1`).
    public var version: String?
    /// The own-vessel context, normalised to the `vessels.` form, if the server sent `self`.
    public var selfContext: String?
    /// Roles, e.g. `["master", "main"]`.
    public var roles: [String]
    /// The server's time, if sent.
    public var timestamp: Date?
    /// signalk-server extension: a random id per server start (detects restarts).
    public var serverStartId: String?
    /// Playback hellos: the start time of the replay.
    public var startTime: Date?
    /// Playback hellos: the replay rate.
    public var playbackRate: Double?

    /// Creates a hello.
    public init(name: String? = nil, version: String? = nil, selfContext: String? = nil, roles: [String] = [],
                timestamp: Date? = nil, serverStartId: String? = nil, startTime: Date? = nil, playbackRate: Double? = nil) {
        self.name = name; self.version = version; self.selfContext = selfContext; self.roles = roles
        self.timestamp = timestamp; self.serverStartId = serverStartId; self.startTime = startTime
        self.playbackRate = playbackRate
    }

    /// Whether the shape is a hello per the contract: an object with `roles`, plus `version` or `self`,
    /// and without `updates` or `requestId`.
    public static func looksLikeHello(_ o: [String: JSONValue]) -> Bool {
        o["updates"] == nil && o["requestId"] == nil && o["roles"] != nil && (o["version"] != nil || o["self"] != nil)
    }

    /// Builds a hello from a JSON value, checking field types; unknown fields are ignored.
    public init(json: JSONValue) throws {
        guard case .object(let o) = json else {
            throw SignalKDecodingError.wrongType(field: "hello", expected: "object", found: json.typeName)
        }
        name = try Fields.optString(o, "name", at: "name")
        version = try Fields.optString(o, "version", at: "version")
        selfContext = try Fields.optString(o, "self", at: "self").map(SignalKContext.selfContext(from:))
        serverStartId = try Fields.optString(o, "serverStartId", at: "serverStartId")
        guard let r = o["roles"] else { throw SignalKDecodingError.missingField(field: "roles") }
        guard case .array(let ra) = r else {
            throw SignalKDecodingError.wrongType(field: "roles", expected: "array", found: r.typeName)
        }
        roles = try ra.enumerated().map { n, e in
            guard case .string(let s) = e else {
                throw SignalKDecodingError.wrongType(field: "roles[\(n)]", expected: "string", found: e.typeName)
            }
            return s
        }
        timestamp = try Fields.optTimestamp(o, "timestamp")
        startTime = try Fields.optTimestamp(o, "startTime")
        if let pr = o["playbackRate"], !pr.isNull {
            guard let d = pr.doubleValue else {
                throw SignalKDecodingError.wrongType(field: "playbackRate", expected: "number", found: pr.typeName)
            }
            playbackRate = d
        }
    }
}

/// A reply to a PUT, access request, login or query: `{requestId, state?, statusCode?, message?, href?, …}`.
public struct SignalKRequestReply: Sendable, Hashable {
    /// The request id the reply belongs to.
    public var requestId: String
    /// `PENDING`, `COMPLETED` or `FAILED`, when sent.
    public var state: String?
    /// HTTP-like status: `statusCode`, or the older `result` field.
    public var statusCode: Int?
    /// Human-readable message, if any.
    public var message: String?
    /// Where to poll the request (`/signalk/v1/requests/<id>`), if sent.
    public var href: String?
    /// The whole reply object (for `accessRequest`, `login`, `put`, …).
    public var raw: [String: JSONValue]

    /// `true` when the request finished (`COMPLETED` or `FAILED`).
    public var isFinished: Bool { state == "COMPLETED" || state == "FAILED" }
    /// `true` when finished with `COMPLETED` and a 2xx status.
    public var isSuccess: Bool { state == "COMPLETED" && (statusCode.map { (200..<300).contains($0) } ?? false) }
}

/// A PUT the server forwards to this client because the client publishes the path
/// (`{requestId, context, put:[{path, value}]}`, no `state`).
public struct SignalKForwardedPut: Sendable, Hashable {
    /// The request id to answer with.
    public var requestId: String
    /// The context of the PUT, if sent.
    public var context: String?
    /// The `put` member as sent (an array of `{path, value}` from signalk-server, or an object).
    public var put: JSONValue
}

/// Every kind of frame a Signal K server may send on the stream socket (contract §3.4).
public enum SignalKServerMessage: Sendable, Hashable {
    /// The hello (first frame).
    case hello(SignalKHello)
    /// A delta (object with `updates`).
    case delta(SignalKDelta)
    /// A request reply (object with `requestId`).
    case reply(SignalKRequestReply)
    /// A PUT forwarded to this client (object with `requestId`, `put`, and no `state`).
    case forwardedPut(SignalKForwardedPut)
    /// A JSON-string frame: a subscription warning, the unsubscribe error or a security close reason.
    case warning(String)
    /// An object with `errorMessage`; the server usually closes afterwards.
    case error(String)
    /// A server event: `{type, data}` (with `serverevents=all`) or `{event, data}` (with `events=`).
    case event(name: String, data: JSONValue)
    /// Valid JSON of a shape this client does not know; kept so it can be logged.
    case unknown(JSONValue)

    /// Parses and classifies one text frame. Throws ``SignalKDecodingError`` for invalid JSON
    /// and for a recognised message (hello, delta, reply) whose fields are malformed; unknown
    /// shapes are returned as ``unknown(_:)``.
    ///
    /// Deltas are decoded in a single pass straight from the bytes (no intermediate dictionaries);
    /// the result equals `classify(SignalKJSON.parse(bytes))`.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws -> SignalKServerMessage {
        try parseFast(bytes)
    }

    /// Parses a frame given as text.
    public static func parse(_ text: String) throws -> SignalKServerMessage {
        var text = text
        return try text.withUTF8 { try parseFast(UnsafeRawBufferPointer($0)) }
    }

    /// Parses a frame given as `Data`.
    public static func parse(_ data: Data) throws -> SignalKServerMessage { try data.withUnsafeBytes { try parseFast($0) } }

    /// Parses a frame given as a byte array.
    public static func parse(_ bytes: [UInt8]) throws -> SignalKServerMessage { try bytes.withUnsafeBytes { try parseFast($0) } }

    /// Classifies an already parsed JSON value.
    public static func classify(_ json: JSONValue) throws -> SignalKServerMessage {
        switch json {
        case .string(let s): return .warning(s)
        case .object(let o):
            if o["updates"] != nil { return .delta(try SignalKDelta(object: o)) }
            if let rid = o["requestId"] {
                guard case .string(let requestId) = rid else {
                    throw SignalKDecodingError.wrongType(field: "requestId", expected: "string", found: rid.typeName)
                }
                if let put = o["put"], o["state"] == nil {
                    return .forwardedPut(SignalKForwardedPut(
                        requestId: requestId, context: try Fields.optString(o, "context", at: "context"), put: put))
                }
                var status: Int?
                if let sc = o["statusCode"] ?? o["result"], !sc.isNull {
                    guard let i = sc.intValue else {
                        throw SignalKDecodingError.wrongType(field: "statusCode", expected: "integer", found: sc.typeName)
                    }
                    status = i
                }
                return .reply(SignalKRequestReply(
                    requestId: requestId, state: try Fields.optString(o, "state", at: "state"), statusCode: status,
                    message: try Fields.optString(o, "message", at: "message"),
                    href: try Fields.optString(o, "href", at: "href"), raw: o))
            }
            if SignalKHello.looksLikeHello(o) { return .hello(try SignalKHello(json: json)) }
            if let em = o["errorMessage"] { return .error(em.stringValue ?? em.jsonString) }
            if let data = o["data"] {
                if case .string(let t)? = o["type"] { return .event(name: t, data: data) }
                if case .string(let e)? = o["event"] { return .event(name: e, data: data) }
            }
            return .unknown(json)
        default:
            return .unknown(json)
        }
    }
}

enum Fields {
    static func optString(_ o: [String: JSONValue], _ key: String, at loc: @autoclosure () -> String) throws -> String? {
        switch o[key] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        case let v?: throw SignalKDecodingError.wrongType(field: loc(), expected: "string", found: v.typeName)
        }
    }

    static func optTimestamp(_ o: [String: JSONValue], _ key: String) throws -> Date? {
        guard let s = try optString(o, key, at: key) else { return nil }
        guard let d = SignalKTimestamp.parse(s) else { throw SignalKDecodingError.invalidTimestamp(field: key, value: s) }
        return d
    }
}
