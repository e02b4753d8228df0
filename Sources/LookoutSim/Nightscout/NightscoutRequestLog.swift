import Foundation

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
