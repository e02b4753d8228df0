import Foundation
import Hummingbird
import Logging
import LookoutWire

/// A local Northlight API (seed 003, `https://northlight.app/api/v1`) for tests and
/// `lookout sim northlight`: plain HTTP on 127.0.0.1, the API under `/api/v1`.
///
/// ```swift
/// let sim = NorthlightSimulator(options: .init(rateLimits: [.free: 3]))
/// let base = try await sim.start()                  // http://127.0.0.1:<port>/api/v1
/// let key = await sim.addProject(tier: .free)       // an API key
/// await sim.injectFailures(status: 503, count: 1)   // the next request answers 503
/// ```
///
/// What it does:
/// - every request needs `X-API-Key` of a project (401 `invalid_api_key`) and `X-Platform`
///   (400, field `X-Platform`);
/// - rate limits per tier and one-minute window on the injected clock (seed §7: free 100,
///   starter 1000, growth 5000, enterprise unlimited): 429 `rate_limit_exceeded` with
///   `Retry-After` in whole seconds until the window ends;
/// - `POST /feedback` and `POST /bugs` validate like the API (400 `invalid_input` with `field`:
///   title required ≤ 255 characters, description required, `user_email` format, `severity`
///   low|medium|high|critical, optional strings must be strings) and answer 201
///   `{"success":true,"feedback_id"|"bug_id":uuid}`; the free tier's 6th item gets 402
///   `feedback_limit_reached`; new feedback appears on the board as `suggested`;
/// - `POST /feedback/{id}/vote` needs `user_identifier`; one vote per user per item (a repeat
///   answers the unchanged count); unknown ids 404 `not_found`;
/// - `GET /feedback?status=a,b` filters by status (unknown statuses 400, field `status`), most
///   voted first; `GET /roadmap` in position order.
///
/// Simplifications: no moderation flow (use `setStatus`), no HTTPS, no pagination, no
/// certificate pinning, bodies up to 1 MiB.
public final class NorthlightSimulator: Sendable {
    /// Subscription tiers (seed §7).
    public enum Tier: String, Sendable, CaseIterable {
        /// 100 requests/minute, 5 items.
        case free
        /// 1,000 requests/minute.
        case starter
        /// 5,000 requests/minute.
        case growth
        /// Unlimited.
        case enterprise
    }

    /// Configuration.
    public struct Options: Sendable {
        /// TCP port on 127.0.0.1; 0 picks a free one.
        public var port: Int
        /// Requests per minute by tier; a missing tier (or nil) is unlimited.
        public var rateLimits: [Tier: Int]
        /// Items the free tier may submit.
        public var freeItemLimit: Int
        /// Give new projects the sample board and roadmap.
        public var seedData: Bool
        /// Injected clock (rate windows, `created_at`).
        public var clock: @Sendable () -> Date

        /// Defaults as the seed states them.
        public init(port: Int = 0, rateLimits: [Tier: Int] = [.free: 100, .starter: 1000, .growth: 5000],
                    freeItemLimit: Int = 5, seedData: Bool = true, clock: @escaping @Sendable () -> Date = { Date() }) {
            self.port = port; self.rateLimits = rateLimits; self.freeItemLimit = freeItemLimit
            self.seedData = seedData; self.clock = clock
        }
    }

    /// A request as received (for tests), headers by lower-cased name.
    public struct RecordedRequest: Sendable {
        /// Method.
        public var method: String
        /// Path with query.
        public var target: String
        /// Headers.
        public var headers: [String: String]
        /// Body.
        public var body: Data
        /// Answer status.
        public var status: Int
    }

    /// Why the simulator did not start.
    public enum SimulatorError: Error, Sendable {
        /// The server stopped before it reported its port.
        case didNotStart
        /// `start()` was called twice.
        case alreadyRunning
    }

    let options: Options
    let state = NorthlightSimState()
    private let running = RunState()

    /// A simulator (not yet listening).
    public init(options: Options = Options()) { self.options = options }

    /// Starts listening; returns the API base URL `http://127.0.0.1:<port>/api/v1`.
    public func start() async throws -> URL {
        let port = try await SimServer.start(
            NorthlightRoutes.router(self).buildResponder(), port: options.port, label: "LookoutSim.Northlight", running: running,
            alreadyRunning: SimulatorError.alreadyRunning, didNotStart: SimulatorError.didNotStart)
        return URL(string: "http://127.0.0.1:\(port)/api/v1")!
    }

    /// Stops the server.
    public func stop() async {
        await SimServer.stop(running)
    }

    // MARK: Test API

    /// Creates a project of `tier` and returns its API key (`nl_<tier>_<random>`).
    public func addProject(tier: Tier) async -> String {
        let key = "nl_\(tier.rawValue)_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        var project = NorthlightProject(tier: tier)
        if options.seedData {
            project.feedback = NorthlightSeedData.board(now: options.clock())
            project.roadmap = NorthlightSeedData.roadmap
        }
        await state.add(key: key, project: project)
        return key
    }

    /// The next `count` requests (after authentication) answer `status` with an error body.
    public func injectFailures(status: Int, count: Int = 1) async { await state.inject(status, count: count) }

    /// The next request answers `307 Temporary Redirect` to `location` (a hostile or misconfigured
    /// server: clients must not follow it with their API key).
    public func injectRedirect(to location: String) async {
        await state.inject(307, headers: [("Location", location)], count: 1)
    }

    /// Every request so far, oldest first.
    public func requests() async -> [RecordedRequest] { await state.requests }

    /// The bug reports a project received, as sent (plus `id`).
    public func bugs(apiKey: String) async -> [JSONValue] { await state.projects[apiKey]?.bugs ?? [] }

    /// A project's board as `GET /feedback` would list every item.
    public func feedback(apiKey: String) async -> [JSONValue] {
        await state.projects[apiKey]?.feedback.map(\.publicJSON) ?? []
    }

    /// The stored e-mail and device info of a feedback item (not on the public board).
    public func submission(apiKey: String, id: String) async -> (email: String?, deviceInfo: JSONValue?)? {
        guard let item = await state.projects[apiKey]?.feedback.first(where: { $0.id == id }) else { return nil }
        return (item.userEmail, item.deviceInfo)
    }

    /// Moves a feedback item to `status` (moderation).
    public func setStatus(apiKey: String, id: String, status: String) async {
        _ = await state.with(apiKey) { project in
            if let i = project.feedback.firstIndex(where: { $0.id == id }) { project.feedback[i].status = status }
        }
    }
}
