import Foundation

/// One request the simulator answered, for assertions (retries, headers sent, paths used).
public struct NightscoutRequestRecord: Sendable {
    /// HTTP method, e.g. `GET`.
    public var method: String
    /// Path without the query, e.g. `/api/v3/entries`.
    public var path: String
    /// The raw query string (percent-encoded), or nil.
    public var query: String?
    /// Request headers, names lowercased.
    public var headers: [String: String]
    /// Status code sent (including injected faults).
    public var status: Int
}

/// Keeps every answered request in order.
actor NightscoutRequestLog {
    var records: [NightscoutRequestRecord] = []
    func add(_ r: NightscoutRequestRecord) { records.append(r) }
    func clear() { records.removeAll() }
}

extension NightscoutSimulator {
    /// Every request answered so far, oldest first.
    public func requestLog() async -> [NightscoutRequestRecord] { await requests.records }

    /// Forgets the recorded requests.
    public func clearRequestLog() async { await requests.clear() }
}
