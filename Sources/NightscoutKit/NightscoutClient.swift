import Foundation

/// A Nightscout client for API v1 and v3 (spec §0–§3).
///
/// * v1 requests carry the credentials' v1 headers (`api-secret: sha1hex(secret or token)` or
///   `Authorization: Bearer <jwt>`).
/// * v3 requests carry `Authorization: Bearer <jwt>`: the configured JWT, or one exchanged from
///   the access token through a `JWTCache` (refreshed before expiry, and re-exchanged once when
///   the server answers 401). An API secret cannot be used with v3.
/// * Non-2xx answers become `NightscoutError`s (`.unauthorized`, `.temporarilyUnavailable` with
///   `Retry-After` for 429/503, `.http`); no error text contains a credential.
///
/// The client is immutable and `Sendable`; share one instance per site.
public final class NightscoutClient: Sendable, CustomStringConvertible {
    /// The site and credentials.
    public let configuration: NightscoutConfiguration
    /// Per-request timeout in seconds.
    public let timeout: TimeInterval
    /// The transport.
    public let transport: NightscoutTransport
    /// The JWT cache used for v3 when the credentials are an access token.
    public let jwtCache: JWTCache?
    /// The API chosen at run time (see `resolvedAPI()`).
    let apiResolution = APIResolution()
    /// Whether the site serves Remote 2.0 (see `supportsRemoteCommands()`).
    let remoteCommandsSupport = RemoteCommandsSupport()

    /// Creates a client.
    /// - Parameters:
    ///   - configuration: site and credentials.
    ///   - timeout: per-request timeout in seconds (default 30).
    ///   - maximumResponseBytes: the largest response body accepted (default 16 MiB) by the
    ///     default transport.
    ///   - authenticationFailureDelay: the wait after a failed JWT exchange (see `JWTCache`).
    ///   - now: the clock used to judge JWT expiry.
    ///   - transport: the transport (default: AsyncHTTPClient's shared client).
    public init(configuration: NightscoutConfiguration, timeout: TimeInterval = 30,
                maximumResponseBytes: Int = 16 * 1024 * 1024, authenticationFailureDelay: TimeInterval = 5,
                now: @escaping @Sendable () -> Date = { Date() }, transport: NightscoutTransport? = nil) {
        self.configuration = configuration
        self.timeout = timeout
        let transport = NightscoutTransport.redacting(transport ?? .asyncHTTPClient(maximumBodyBytes: maximumResponseBytes),
                                                      configuration.credentials.redactions)
        self.transport = transport
        if case .accessToken(let token) = configuration.credentials {
            let site = configuration
            let userAgent = configuration.userAgent
            jwtCache = JWTCache(accessToken: token, failureDelay: authenticationFailureDelay, now: now) { path in
                let request = NightscoutRequest(
                    method: "GET", url: site.url(path: path),
                    headers: [.init(name: "Accept", value: "application/json"), .init(name: "User-Agent", value: userAgent)])
                return try await transport.send(request, timeout)
            }
        } else {
            jwtCache = nil
        }
    }

    /// The configuration's description (no credentials).
    public var description: String { "NightscoutClient(\(configuration))" }

    // MARK: - Transport

    /// Sends `request` as built and returns the raw response (any status).
    public func send(_ request: NightscoutRequest) async throws -> NightscoutHTTPResponse {
        try await transport.send(request, timeout)
    }

    /// Sends a v1 request and throws for a non-2xx status.
    func sendV1(_ request: NightscoutRequest) async throws -> NightscoutHTTPResponse {
        let response = try await send(request)
        try NightscoutResponse.check(response)
        return response
    }

    /// A v1 request for `path` (under `/api/v1`) with the v1 headers and an optional JSON body.
    func v1Request(_ method: String, _ path: String, query: [(String, String)] = [], body: Data? = nil) -> NightscoutRequest {
        let url = configuration.url(path: NightscoutAPIVersion.v1.pathPrefix + path,
                                    percentEncodedQuery: query.isEmpty ? nil : NightscoutRequest.encodeQuery(query))
        var headers = V1Query.headers(configuration)
        if body != nil { headers.append(.init(name: "Content-Type", value: "application/json")) }
        return NightscoutRequest(method: method, url: url, headers: headers, body: body)
    }

    /// The JWT for v3 requests (cached, exchanged or configured).
    /// - Throws: `NightscoutError.unsupportedCredentials` for an API secret or no credentials.
    public func currentJWT() async throws -> String {
        switch configuration.credentials {
        case .jwt(let token): return token
        case .accessToken: return try await jwtCache!.token()
        case .apiSecret: throw NightscoutError.unsupportedCredentials("API v3 needs an access token or JWT, not the API secret")
        case .none: throw NightscoutError.unsupportedCredentials("API v3 needs an access token or JWT")
        }
    }

    /// Sends a v3 request built for a JWT. A 401 with an exchanged JWT invalidates it and retries
    /// once with a fresh one. Returns any non-401 response unchecked.
    func sendV3(_ build: @escaping @Sendable (String) throws -> NightscoutRequest) async throws -> NightscoutHTTPResponse {
        let transport = self.transport, timeout = self.timeout
        let attempt: @Sendable (String) async throws -> NightscoutHTTPResponse = { jwt in
            let response = try await transport.send(try build(jwt), timeout)
            if response.status == 401 { try NightscoutResponse.check(response) }
            return response
        }
        if let cache = jwtCache { return try await cache.withToken(attempt) }
        return try await attempt(try await currentJWT())
    }

    /// A v3 request for `path` (starting with `/api/v3`) with a JWT and an optional JSON body.
    func v3Request(_ method: String, _ path: String, query: [(String, String)] = [], body: Data? = nil,
                   headers extra: [NightscoutRequest.Header] = [], jwt: String) -> NightscoutRequest {
        let url = configuration.url(path: path, percentEncodedQuery: query.isEmpty ? nil : NightscoutRequest.encodeQuery(query))
        var headers = V3Search.headers(configuration, jwt: jwt) + extra
        if body != nil { headers.append(.init(name: "Content-Type", value: "application/json")) }
        return NightscoutRequest(method: method, url: url, headers: headers, body: body)
    }

    /// JSON-encodes a request body.
    static func encode<B: Encodable>(_ body: B) throws -> Data {
        do { return try JSONEncoder().encode(body) }
        catch { throw NightscoutError.invalidRequest("cannot encode body: \(error)") }
    }
}
