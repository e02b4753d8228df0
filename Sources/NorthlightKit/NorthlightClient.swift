import Foundation
import Logging
import LookoutWire

/// A client of one Northlight project: submit feedback and bug reports, vote, read the public
/// board and roadmap. One instance per API key; it is an actor, so share it freely between tasks.
///
/// ```swift
/// let northlight = try NorthlightClient.configure(apiKey: key)
/// try await northlight.setUserEmail("user@example.com")
/// let id = try await northlight.submitFeedback(title: "Dark mode", description: "Please", category: "UI/UX")
/// let votes = try await northlight.vote(feedbackID: id, userIdentifier: "user-42")
/// let board = try await northlight.publicFeedback(status: ["approved", "suggested"])
/// ```
///
/// Input is checked before anything is sent (`NorthlightError.invalidInput` names the field).
/// The board and roadmap are cached for `configuration.cacheTTL` seconds; a submission or vote
/// clears the cache. Nothing this client logs or throws contains the API key.
public actor NorthlightClient {
    /// The project, URL and client identity.
    public nonisolated let configuration: NorthlightConfiguration
    private let transport: NorthlightTransport
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let deviceInfo: @Sendable () -> DeviceInfo
    private var userEmail: String?
    private var userIdentifier: String?
    private var boards = NorthlightCache<[PublicFeedback]>()
    private var roadmaps = NorthlightCache<[RoadmapItem]>()

    /// A client.
    /// - Parameters:
    ///   - transport: how requests are sent (AsyncHTTPClient by default).
    ///   - logger: request lines at debug level (method, path, status; never headers or bodies).
    ///   - now: the clock of the cache.
    ///   - deviceInfo: the device description sent with submissions (this machine by default).
    public init(configuration: NorthlightConfiguration, transport: NorthlightTransport = .asyncHTTPClient(),
                logger: Logger = Logger(label: "NorthlightKit"), now: @escaping @Sendable () -> Date = { Date() },
                deviceInfo: (@Sendable () -> DeviceInfo)? = nil) {
        self.configuration = configuration
        self.transport = transport
        self.logger = logger
        self.now = now
        let version = configuration.appVersion
        self.deviceInfo = deviceInfo ?? { DeviceInfo.current(appVersion: version) }
    }

    /// The seed's `Northlight.configure(apiKey:)`: a client of the project with `apiKey`.
    /// - Throws: `invalidAPIKey` for an unusable key, `invalidInput("baseURL: …")` for a URL that
    ///   is not HTTPS (HTTP only to loopback).
    public static func configure(apiKey: String, baseURL: URL = NorthlightConfiguration.defaultBaseURL,
                                 appVersion: String = "0.0.0") throws(NorthlightError) -> NorthlightClient {
        NorthlightClient(configuration: try NorthlightConfiguration(apiKey: apiKey, baseURL: baseURL, appVersion: appVersion))
    }

    // MARK: User

    /// Sets (or clears, with nil) the e-mail sent with every submission.
    /// - Throws: `invalidInput("email: …")` for an address that is not one.
    public func setUserEmail(_ email: String?) throws(NorthlightError) {
        userEmail = try email.map { (e: String) throws(NorthlightError) in try NorthlightValidation.email(e) }
    }

    /// Sets (or clears) the identifier votes are cast with.
    public func setUserIdentifier(_ identifier: String?) throws(NorthlightError) {
        userIdentifier = try identifier.map { (i: String) throws(NorthlightError) in try NorthlightValidation.userIdentifier(i) }
    }

    /// The e-mail and identifier set so far.
    public var user: (email: String?, identifier: String?) { (userEmail, userIdentifier) }

    // MARK: Submitting

    /// Validates and encodes feedback (device info collected now). `email` overrides the user's.
    public func prepareFeedback(title: String, description: String, category: String? = nil,
                                email: String? = nil) throws(NorthlightError) -> NorthlightSubmission {
        let body = FeedbackBody(title: try NorthlightValidation.title(title),
                                description: try NorthlightValidation.description(description),
                                category: try Self.optional(category, field: "category"),
                                userEmail: try resolvedEmail(email), deviceInfo: deviceInfo().forFeedback)
        return NorthlightSubmission(kind: .feedback, body: try Self.encode(body))
    }

    /// Validates and encodes a bug report (device info with memory, battery and network).
    public func prepareBug(title: String, description: String, severity: NorthlightSeverity = .medium,
                           stepsToReproduce: String? = nil, email: String? = nil) throws(NorthlightError) -> NorthlightSubmission {
        let body = BugBody(title: try NorthlightValidation.title(title),
                           description: try NorthlightValidation.description(description), severity: severity,
                           stepsToReproduce: try Self.optional(stepsToReproduce, field: "steps_to_reproduce"),
                           userEmail: try resolvedEmail(email), deviceInfo: deviceInfo())
        return NorthlightSubmission(kind: .bug, body: try Self.encode(body))
    }

    /// Sends a prepared submission; returns the server's `feedback_id` or `bug_id`.
    public func send(_ submission: NorthlightSubmission) async throws(NorthlightError) -> String {
        let response = try await exchange("POST", submission.kind.path, body: submission.body)
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let id = object[submission.kind.idField] as? String, !id.isEmpty else {
            throw .invalidResponse("expected {\"\(submission.kind.idField)\": …} from POST \(submission.kind.path)")
        }
        boards.clear()
        return id
    }

    /// Submits feedback; returns its id.
    public func submitFeedback(title: String, description: String, category: String? = nil,
                               email: String? = nil) async throws(NorthlightError) -> String {
        try await send(try prepareFeedback(title: title, description: description, category: category, email: email))
    }

    /// Reports a bug; returns its id.
    public func reportBug(title: String, description: String, severity: NorthlightSeverity = .medium,
                          stepsToReproduce: String? = nil, email: String? = nil) async throws(NorthlightError) -> String {
        try await send(try prepareBug(title: title, description: description, severity: severity,
                                      stepsToReproduce: stepsToReproduce, email: email))
    }

    /// Votes for a feedback item as `userIdentifier` (default: the one set); returns the vote
    /// count. A user's second vote for an item does not count again.
    public func vote(feedbackID: String, userIdentifier: String? = nil) async throws(NorthlightError) -> Int {
        let id = try NorthlightValidation.feedbackID(feedbackID)
        guard let user = try userIdentifier.map({ (u: String) throws(NorthlightError) in try NorthlightValidation.userIdentifier(u) })
            ?? self.userIdentifier else {
            throw .invalidInput("user_identifier: required (set one with setUserIdentifier or pass it)")
        }
        let response: NorthlightHTTPResponse
        do {
            response = try await exchange("POST", "/feedback/\(id)/vote", body: try Self.encode(VoteBody(userIdentifier: user)))
        } catch .serverError(404) {
            // A missing item and a missing route (a url without /api/v1) both answer 404: the
            // board's route tells them apart.
            do {
                _ = try await exchange("GET", "/feedback")
            } catch .serverError(404) {
                throw .invalidInput("no Northlight API under the profile's url (404 for POST /feedback/\(id)/vote "
                                    + "and for GET /feedback): the url should end in /api/v1")
            } catch {}
            throw .invalidInput("feedback_id: no feedback item \(id)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let count = (object["vote_count"] as? NSNumber)?.intValue else {
            throw .invalidResponse("expected {\"vote_count\": …} from POST /feedback/…/vote")
        }
        boards.clear()
        return count
    }

    // MARK: Reading

    /// The public board, optionally only items with the given statuses (`approved`,
    /// `suggested`, …). Cached for `cacheTTL` seconds unless `refresh`.
    public func publicFeedback(status: [String] = [], refresh: Bool = false) async throws(NorthlightError) -> [PublicFeedback] {
        for s in status where s.isEmpty || !s.allSatisfy({ $0.isLetter || $0 == "_" }) {
            throw .invalidInput("status: expected words such as approved or suggested, got \"\(s.prefix(40))\"")
        }
        let filter = status.joined(separator: ",")
        if !refresh, let cached = boards.value(filter, now: now(), ttl: configuration.cacheTTL) { return cached }
        let path = filter.isEmpty ? "/feedback" : "/feedback?status=" + filter
        let items = try Self.decode(BoardResponse.self, try await exchange("GET", path).body, what: "GET /feedback").feedback
        boards.store(filter, items, now: now())
        return items
    }

    /// The public roadmap in order. Cached for `cacheTTL` seconds unless `refresh`.
    public func roadmap(refresh: Bool = false) async throws(NorthlightError) -> [RoadmapItem] {
        if !refresh, let cached = roadmaps.value("", now: now(), ttl: configuration.cacheTTL) { return cached }
        let items = try Self.decode(RoadmapResponse.self, try await exchange("GET", "/roadmap").body, what: "GET /roadmap")
            .roadmapItems.sorted { $0.position < $1.position }
        roadmaps.store("", items, now: now())
        return items
    }

    /// Forgets cached boards and roadmap.
    public func clearCache() {
        boards.clear()
        roadmaps.clear()
    }

    // MARK: HTTP

    /// Sends one request and maps non-2xx answers to errors.
    private func exchange(_ method: String, _ path: String, body: Data? = nil) async throws(NorthlightError) -> NorthlightHTTPResponse {
        guard let url = URL(string: configuration.baseURL.absoluteString + path) else { throw .invalidInput("path: \(path)") }
        var headers: [(name: String, value: String)] = [
            ("X-API-Key", configuration.apiKey), ("X-Platform", configuration.platform), ("Accept", "application/json"),
        ]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        let request = NorthlightHTTPRequest(method: method, url: url, headers: headers, body: body)
        let logPath = url.path
        let response: NorthlightHTTPResponse
        let secrets = [configuration.apiKey]
        do {
            response = try await transport.send(request, configuration.timeout)
        } catch {
            let redacted = error.redacting(secrets)
            logger.debug("northlight: \(method) \(logPath) failed: \(redacted)")
            throw redacted
        }
        logger.debug("northlight: \(method) \(logPath) → \(response.status)")
        if (200..<300).contains(response.status) { return response }
        throw Self.error(for: response, secrets: secrets)
    }

    /// The error an answer means. The server's own text (`field`, `message`) loses every
    /// occurrence of `secrets` (the API key) before it is shortened: a hostile server that
    /// echoes the key gets it into no error, message or log.
    static func error(for response: NorthlightHTTPResponse, secrets: [String] = []) -> NorthlightError {
        let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
        let code = object?["error"] as? String
        if code == "feedback_limit_reached" || response.status == 402 { return .feedbackLimitReached }
        switch response.status {
        case 401, 403: return .invalidAPIKey
        case 429: return .rateLimitExceeded(retryAfter: response.headers["retry-after"].flatMap(retryAfter))
        case 400, 422:
            let field = (object?["field"] as? String).map { String(Redaction.text($0, secrets: secrets).prefix(64)) } ?? "request"
            let message = Redaction.text((object?["message"] as? String) ?? code ?? "refused by the server", secrets: secrets).prefix(200)
            return .invalidInput("\(field): \(message)")
        default: return .serverError(statusCode: response.status)
        }
    }

    /// `Retry-After` as seconds: a number of seconds or an HTTP date.
    static func retryAfter(_ text: String) -> TimeInterval? {
        HTTPDate.retryAfter(text)
    }

    private func resolvedEmail(_ email: String?) throws(NorthlightError) -> String? {
        if let email, !email.isEmpty { return try NorthlightValidation.email(email) }
        return userEmail
    }

    private static func optional(_ text: String?, field: String) throws(NorthlightError) -> String? {
        guard let text, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
        guard text.utf8.count <= 64 * 1024 else { throw .invalidInput("\(field): at most 64 KiB") }
        return text
    }

    private static func encode<T: Encodable>(_ value: T) throws(NorthlightError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do { return try encoder.encode(value) } catch { throw .invalidInput("request: cannot encode (\(error))") }
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ data: Data, what: String) throws(NorthlightError) -> T {
        do { return try JSONDecoder().decode(type, from: data) } catch {
            throw .invalidResponse("cannot read the answer to \(what) (\(String(describing: error).prefix(160)))")
        }
    }
}
