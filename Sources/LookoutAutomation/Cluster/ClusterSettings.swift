import Foundation

/// How a `serve --cluster` instance takes part: the cluster's name, its own id, and the lease
/// timings. A lease lasts `ttl` seconds and is renewed every `ttl / 3`; the work of an instance
/// that stops or dies moves to the others within `ttl` and one renewal (20 s with the default
/// 15 s), and a clean stop hands it over at once.
public struct ClusterSettings: Sendable, Equatable {
    /// The cluster's name (`--cluster NAME`): instances with the same name and database share work.
    public var name: String
    /// This instance's id, unique in the cluster (default `host:pid:random`).
    public var instance: String
    /// Seconds a lease lasts without renewal.
    public var ttl: TimeInterval
    /// Seconds kept between the local deadline of a holding and the database's, against clocks
    /// that run at slightly different rates.
    public var margin: TimeInterval

    /// Settings for cluster `name`; `instance` defaults to `host:pid:random`.
    public init(name: String, instance: String? = nil, ttl: TimeInterval = 15) {
        self.name = name
        self.instance = instance ?? ClusterSettings.defaultInstance()
        self.ttl = ttl
        margin = min(1, ttl / 10)
    }

    /// Seconds between heartbeats (a third of the lease).
    public var renewInterval: TimeInterval { ttl / 3 }

    /// The longest time before another instance takes over a dead instance's work: the lease
    /// and one renewal of the instance that takes it.
    public var takeover: TimeInterval { ttl + renewInterval }

    /// `host:pid:xxxx`.
    static func defaultInstance() -> String {
        let host = ProcessInfo.processInfo.hostName
        let random = String(UInt16.random(in: 0...UInt16.max), radix: 16)
        return "\(host):\(getpid()):\(random)"
    }
}
