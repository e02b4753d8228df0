import LookoutWire

/// The subscription `policy` field: how often the server sends a subscribed path's updates; the
/// policies signalk-server implements (`ideal` is deliberately absent: the server ignores it with
/// a warning and behaves as `instant`).
public enum SignalKSubscriptionPolicy: String, Sendable, Hashable, Codable {
    /// Send each change, no faster than `minPeriod`.
    case instant
    /// Send the latest value per source seen in each `period` window; nothing if nothing arrived.
    case fixed
}

/// The subscription `format` field. signalk-server supports only ``delta``; ``full`` makes it send the
/// warning `"Only delta format supported, using it"`.
public enum SignalKSubscriptionFormat: String, Sendable, Hashable, Codable {
    /// Delta messages (the only format signalk-server supports).
    case delta
    /// Full-model messages (not supported by signalk-server).
    case full
}

/// One row of a `subscribe` message. `period` and `minPeriod` are `Duration`s and go on the wire as
/// **integer milliseconds** (rounded down; the contract fixes this, SignalKKit's "seconds" was wrong).
public struct SignalKSubscription: Sendable, Hashable, Encodable {
    /// The path pattern (`navigation.speedOverGround`, `navigation.*`, `*`). Always sent: the server
    /// skips rows without a path.
    public var path: String
    /// Window for `fixed` (wire: ms).
    public var period: Duration?
    /// Minimum spacing for `instant` (wire: ms).
    public var minPeriod: Duration?
    /// The format, usually omitted (delta).
    public var format: SignalKSubscriptionFormat?
    /// The policy; the contract recommends ``SignalKSubscriptionPolicy/instant`` for gauges and
    /// ``SignalKSubscriptionPolicy/fixed`` with a `period` for bulk data such as AIS.
    public var policy: SignalKSubscriptionPolicy?

    /// Creates a row.
    public init(path: String, period: Duration? = nil, minPeriod: Duration? = nil,
                format: SignalKSubscriptionFormat? = nil, policy: SignalKSubscriptionPolicy? = nil) {
        self.path = path; self.period = period; self.minPeriod = minPeriod; self.format = format; self.policy = policy
    }

    /// `period` in whole milliseconds, as sent.
    public var periodMilliseconds: Int? { period.map(Self.milliseconds) }
    /// `minPeriod` in whole milliseconds, as sent.
    public var minPeriodMilliseconds: Int? { minPeriod.map(Self.milliseconds) }

    static func milliseconds(_ d: Duration) -> Int {
        let c = d.components
        return Int(c.seconds) * 1000 + Int(c.attoseconds / 1_000_000_000_000_000)
    }

    enum CodingKeys: String, CodingKey { case path, period, format, policy, minPeriod }

    /// Encodes `path`, then `format`, `policy`, `period`, `minPeriod` when set (the order of the
    /// contract's example exchange).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(path, forKey: .path)
        try c.encodeIfPresent(format, forKey: .format)
        try c.encodeIfPresent(policy, forKey: .policy)
        try c.encodeIfPresent(periodMilliseconds, forKey: .period)
        try c.encodeIfPresent(minPeriodMilliseconds, forKey: .minPeriod)
    }

    func writeJSON(into out: inout String) {
        out += "{\"path\":"
        JSONWriter.writeString(path, into: &out)
        if let f = format { out += ",\"format\":\"\(f.rawValue)\"" }
        if let p = policy { out += ",\"policy\":\"\(p.rawValue)\"" }
        if let p = periodMilliseconds { out += ",\"period\":\(p)" }
        if let m = minPeriodMilliseconds { out += ",\"minPeriod\":\(m)" }
        out += "}"
    }
}

/// Which sources a subscription delivers (signalk-server extension).
public enum SignalKSourcePolicy: String, Sendable, Hashable, Codable {
    /// Only the priority winner (the server default).
    case preferred
    /// Every source's values.
    case all
}

/// A `subscribe` message: `{"context":…, "subscribe":[rows…]}`.
///
/// ``jsonString`` gives the exact bytes to send; `Encodable` produces the same members (key order
/// then depends on the encoder). A `nil` context is omitted, which signalk-server treats as
/// "every context".
public struct SignalKSubscribeMessage: Sendable, Hashable, Encodable {
    /// The context pattern: `vessels.self` (own vessel, the default), `vessels.*` (AIS), `*`, or `nil`.
    public var context: String?
    /// The rows (send only rows not already subscribed on this socket: the server does not dedupe).
    public var subscribe: [SignalKSubscription]
    /// Optional `sourcePolicy` (signalk-server extension).
    public var sourcePolicy: SignalKSourcePolicy?

    /// Creates a subscribe message.
    public init(context: String? = SignalKContext.selfAlias, subscribe: [SignalKSubscription], sourcePolicy: SignalKSourcePolicy? = nil) {
        self.context = context; self.subscribe = subscribe; self.sourcePolicy = sourcePolicy
    }

    enum CodingKeys: String, CodingKey { case context, subscribe, sourcePolicy }

    /// Encodes `context` (when set), `subscribe`, `sourcePolicy` (when set).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(context, forKey: .context)
        try c.encode(subscribe, forKey: .subscribe)
        try c.encodeIfPresent(sourcePolicy, forKey: .sourcePolicy)
    }

    /// The exact compact JSON text, e.g.
    /// `{"context":"vessels.self","subscribe":[{"path":"navigation.speedOverGround","policy":"instant","minPeriod":200}]}`.
    public var jsonString: String {
        var out = "{"
        if let context {
            out += "\"context\":"
            JSONWriter.writeString(context, into: &out)
            out += ","
        }
        out += "\"subscribe\":["
        for (i, row) in subscribe.enumerated() {
            if i > 0 { out += "," }
            row.writeJSON(into: &out)
        }
        out += "]"
        if let sourcePolicy { out += ",\"sourcePolicy\":\"\(sourcePolicy.rawValue)\"" }
        out += "}"
        return out
    }
}

/// The unsubscribe message in the **only** form signalk-server accepts:
/// `{"context":"*","unsubscribe":[{"path":"*"}]}`. It removes every subscription on the socket (and
/// the implicit stream); any other unsubscribe makes the server close the socket. To drop some paths,
/// send this and then re-subscribe the remaining rows.
public struct SignalKUnsubscribeAllMessage: Sendable, Hashable, Encodable {
    /// Creates the message.
    public init() {}

    struct Row: Encodable { let path = "*" }
    enum CodingKeys: String, CodingKey { case context, unsubscribe }

    /// Encodes `context: "*"` and `unsubscribe: [{path: "*"}]`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode("*", forKey: .context)
        try c.encode([Row()], forKey: .unsubscribe)
    }

    /// The exact text: `{"context":"*","unsubscribe":[{"path":"*"}]}`.
    public var jsonString: String { #"{"context":"*","unsubscribe":[{"path":"*"}]}"# }
}
