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
    /// The `identifier` of a `POST` or `PUT` whose body is one JSON document (up to 16 KB) that
    /// has one; nil otherwise. Counts re-sends of the same document, whatever the answer was.
    public var identifier: String? = nil
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

    /// How many `POST`s each document identifier arrived in, on paths starting with `pathPrefix`
    /// (answered or failed: a re-send after a lost answer counts again).
    public func postsByIdentifier(pathPrefix: String) async -> [String: Int] {
        var counts: [String: Int] = [:]
        for record in await requests.records where record.method == "POST" && record.path.hasPrefix(pathPrefix) {
            if let identifier = record.identifier { counts[identifier, default: 0] += 1 }
        }
        return counts
    }

    /// Forgets the recorded requests.
    public func clearRequestLog() async { await requests.clear() }
}
