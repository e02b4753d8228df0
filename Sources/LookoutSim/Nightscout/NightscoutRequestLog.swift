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

    /// Forgets the recorded requests (and the remote-command route hits).
    public func clearRequestLog() async {
        await requests.clear()
        await remoteCommandRoutes.clear()
    }

    /// Every request a remote-command handler (`POST /api/v2/notifications/loop`, Remote 2.0's
    /// `/api/v2/remotecommands`) was routed, as `METHOD path` with the path as it arrived, oldest
    /// first, whatever the handler answered (also 401 or 404).
    public func remoteCommandRouteHits() async -> [String] { await remoteCommandRoutes.hits }
}

/// The requests routed to a remote-command handler (see `remoteCommandRouteHits`).
actor RemoteCommandRouteLog {
    private(set) var hits: [String] = []
    func add(_ req: SimRequest) { hits.append(req.method + " " + req.path) }
    func clear() { hits.removeAll() }
}
