import Foundation
import LookoutWire

/// The outcome of a finished request/response exchange (PUT), as the server's reply states it.
public struct SignalKRequestResult: Sendable, Equatable {
    /// The server's request id, if sent.
    public var requestId: String?
    /// `COMPLETED` (signalk-server) or `FAILED`.
    public var state: String
    /// The reply's `statusCode` (or `result`), else the HTTP status.
    public var statusCode: Int
    /// The reply's message, if any.
    public var message: String?
    /// Where the request can be polled, if sent.
    public var href: String?
}

/// Signal K REST client (contract §4): GET of any path as ``JSONValue``, and PUT with the action reply
/// and `href` polling. Sends the token as `Authorization: Bearer <token>` (never as a cookie or query,
/// which REST does not accept).
public struct SignalKREST: Sendable {
    /// The server root, e.g. `http://192.168.1.10:3000`.
    public let server: URL
    /// The REST base ending in `/`, e.g. `http://192.168.1.10:3000/signalk/v1/api/`.
    public let apiBase: URL
    let transport: any SignalKHTTPTransport
    let tokenProvider: (@Sendable () async -> String?)?
    let sleep: SignalKSleep
    /// The timeout of each single HTTP request.
    public var requestTimeout: Duration = .seconds(10)

    /// Creates a client. `apiBase` defaults to `<server>/signalk/v1/api/` (use
    /// ``SignalKEndpoints/http`` from ``discover(server:transport:)`` when known). `tokenProvider` supplies
    /// the current token (e.g. ``SignalKTokenStore/token()``); `sleep` is injectable for tests.
    public init(server: URL, apiBase: URL? = nil, transport: any SignalKHTTPTransport = SignalKAsyncHTTPTransport(),
                tokenProvider: (@Sendable () async -> String?)? = nil, sleep: SignalKSleep? = nil) {
        self.server = server
        var base = apiBase ?? server.appendingPathComponent("signalk/v1/api")
        if !base.absoluteString.hasSuffix("/") { base = URL(string: base.absoluteString + "/")! }
        self.apiBase = base
        self.transport = transport
        self.tokenProvider = tokenProvider
        self.sleep = sleep ?? SignalKHTTP.realSleep
    }

    /// Creates a client whose token comes from `tokenStore`.
    public init(server: URL, apiBase: URL? = nil, transport: any SignalKHTTPTransport = SignalKAsyncHTTPTransport(),
                tokenStore: SignalKTokenStore, sleep: SignalKSleep? = nil) {
        self.init(server: server, apiBase: apiBase, transport: transport,
                  tokenProvider: { await tokenStore.token() }, sleep: sleep)
    }

    /// `GET <server>/signalk`: the endpoint discovery document (no authentication needed).
    public static func discover(server: URL, transport: any SignalKHTTPTransport = SignalKAsyncHTTPTransport())
        async throws -> SignalKEndpoints
    {
        let url = server.appendingPathComponent("signalk")
        let req = SignalKHTTPRequest(method: "GET", url: url, headers: [SignalKHTTPHeader("Accept", "application/json")])
        let r = try await transport.send(req, timeout: .seconds(10))
        guard (200..<300).contains(r.status) else { throw SignalKHTTP.error(r, req) }
        guard let json = SignalKHTTP.json(r.body) else { throw SignalKClientError.invalidResponse("/signalk is not JSON") }
        do { return try SignalKEndpoints(json: json, baseURL: url) } catch {
            throw SignalKClientError.invalidResponse(String(describing: error))
        }
    }

    static let contextGroups: Set<String> = ["vessels", "aircraft", "aton", "sar"]
    static let topLevel: Set<String> = ["sources", "self", "resources", "version"]

    /// The API-relative slash path for a path:
    /// - `""` → the whole model;
    /// - containing `/` → used as is (`vessels/self/navigation`, `sources`), a leading `/` dropped;
    /// - dotted and starting with `vessels.`, `aircraft.`, `aton.` or `sar.` → absolute: group, id (the
    ///   next segment; ids containing dots need the slash form), then the rest (`vessels.self.navigation.log`);
    /// - `sources`, `self`, `resources…` → as is with dots as slashes;
    /// - any other dotted path → relative to self (`navigation.speedOverGround` → `vessels/self/navigation/speedOverGround`).
    public static func apiPath(for path: String) -> String {
        if path.isEmpty { return "" }
        if path.contains("/") { return path.hasPrefix("/") ? String(path.dropFirst()) : path }
        let segs = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if let first = segs.first, contextGroups.contains(first) || topLevel.contains(first) {
            return segs.joined(separator: "/")
        }
        return "vessels/self/" + segs.joined(separator: "/")
    }

    /// The absolute URL of an API-relative slash path (each segment percent-encoded).
    public func url(forAPIPath apiPath: String) -> URL {
        let enc = apiPath.split(separator: "/", omittingEmptySubsequences: false).map {
            String($0).addingPercentEncoding(withAllowedCharacters: .skPathSegment) ?? String($0)
        }.joined(separator: "/")
        return URL(string: apiBase.absoluteString + enc)!
    }

    func headers(json: Bool) async -> [SignalKHTTPHeader] {
        var h = [SignalKHTTPHeader("Accept", "application/json")]
        if json { h.append(SignalKHTTPHeader("Content-Type", "application/json")) }
        if let t = await tokenProvider?() { h.append(SignalKHTTPHeader("Authorization", "Bearer " + t)) }
        return h
    }

    /// GETs a path (see ``apiPath(for:)``) and returns the JSON. Throws ``SignalKClientError``
    /// (`.http(status: 404, …)` for unknown paths, `.unauthorized` for 401/403).
    public func get(_ path: String) async throws -> JSONValue {
        try await get(url: url(forAPIPath: Self.apiPath(for: path)))
    }

    /// GETs `path` (dotted, relative to `context`, e.g. `vessels.https://boat.example`).
    public func get(path: String, context: String) async throws -> JSONValue {
        let (group, id) = SignalKContext.split(context) ?? (context, "")
        var p = group + "/" + (id.isEmpty ? "" : id.replacingOccurrences(of: "/", with: "%2F"))
        if !path.isEmpty { p += "/" + path.replacingOccurrences(of: ".", with: "/") }
        return try await get(url: url(forAPIPath: p))
    }

    /// GETs an absolute URL, or a server-relative one such as `/signalk/v1/requests/<id>`.
    public func get(url: URL) async throws -> JSONValue {
        let req = SignalKHTTPRequest(method: "GET", url: url, headers: await headers(json: false))
        let r = try await transport.send(req, timeout: requestTimeout)
        guard (200..<300).contains(r.status) else { throw SignalKHTTP.error(r, req) }
        guard let v = SignalKHTTP.json(r.body) else { throw SignalKClientError.invalidResponse("\(url.path) is not JSON") }
        return v
    }

    /// PUTs `value` to `path` (dotted, relative to `context`, default `vessels.self` as the server
    /// requires) with `{"value":…, "source"?:…}` and waits for the result: a `PENDING`/202 reply is
    /// polled at its `href` every `pollInterval` (at least 1 s, the server's rate limit) until
    /// `COMPLETED`/`FAILED` or `timeout`.
    ///
    /// Returns the result when it is `COMPLETED` with a 2xx status; otherwise throws
    /// ``SignalKClientError/requestFailed(state:statusCode:message:)`` (405 = no handler, 400 =
    /// rejected, 502/504 = device failed), ``SignalKClientError/unauthorized(status:message:)`` for a
    /// 401 without a reply, or ``SignalKClientError/timeout(_:)``.
    @discardableResult
    public func put(_ path: String, value: JSONValue, source: String? = nil, context: String = SignalKContext.selfAlias,
                    timeout: Duration = .seconds(10), pollInterval: Duration = .seconds(1)) async throws -> SignalKRequestResult
    {
        let (group, id) = SignalKContext.split(context) ?? (context, "self")
        let apiPath = group + "/" + id + "/" + path.replacingOccurrences(of: ".", with: "/")
        var body: [String: JSONValue] = ["value": value]
        if let source { body["source"] = .string(source) }
        let req = SignalKHTTPRequest(method: "PUT", url: url(forAPIPath: apiPath), headers: await headers(json: true),
                                body: SignalKHTTP.jsonBody(.object(body)))
        let started = ContinuousClock.now
        var slept = Duration.zero
        let r = try await transport.send(req, timeout: min(requestTimeout, timeout))
        let secrets = SignalKHTTP.secrets(of: req)
        guard var reply = Self.reply(r, secrets: secrets) else {
            if (200..<300).contains(r.status) { throw SignalKClientError.invalidResponse("PUT reply is not an object") }
            throw SignalKHTTP.error(r, req)
        }
        let interval = max(pollInterval, .seconds(1))
        while reply.state != "COMPLETED" && reply.state != "FAILED" {
            guard let href = reply.href else { throw SignalKClientError.invalidResponse("PENDING reply without href") }
            if max(slept, ContinuousClock.now - started) + interval > timeout {
                throw SignalKClientError.timeout("PUT \(path) still \(reply.state) after \(timeout)")
            }
            try await sleep(interval)
            slept += interval
            guard let pollURL = URL(string: href, relativeTo: server)?.absoluteURL else {
                throw SignalKClientError.invalidResponse("bad href")
            }
            let preq = SignalKHTTPRequest(method: "GET", url: pollURL, headers: await headers(json: false))
            let pr = try await transport.send(preq, timeout: requestTimeout)
            guard (200..<300).contains(pr.status), let next = Self.reply(pr, secrets: secrets) else { throw SignalKHTTP.error(pr, preq) }
            reply = next
        }
        guard reply.state == "COMPLETED", (200..<300).contains(reply.statusCode) else {
            throw SignalKClientError.requestFailed(state: reply.state, statusCode: reply.statusCode, message: reply.message)
        }
        return reply
    }

    /// Reads a request reply from a response (`nil` when the body is not a JSON object with a
    /// `state` or `statusCode`). The status is `statusCode ?? result ?? HTTP status`; the
    /// message loses every one of `secrets`.
    static func reply(_ r: SignalKHTTPResponse, secrets: [String] = []) -> SignalKRequestResult? {
        guard let j = SignalKHTTP.json(r.body), case .object(let o) = j, o["state"] != nil || o["statusCode"] != nil
        else { return nil }
        let code = (o["statusCode"] ?? o["result"])?.intValue ?? r.status
        let state = o["state"]?.stringValue ?? ((200..<300).contains(code) && code != 202 ? "COMPLETED" : code == 202 ? "PENDING" : "COMPLETED")
        return SignalKRequestResult(
            requestId: o["requestId"]?.stringValue, state: state, statusCode: code,
            message: SignalKClientError.clip(o["message"]?.stringValue.map { Redaction.text($0, secrets: secrets) }),
            href: o["href"]?.stringValue)
    }
}

extension CharacterSet {
    /// Characters allowed unescaped in one path segment.
    static let skPathSegment: CharacterSet = {
        var s = CharacterSet.urlPathAllowed
        s.remove(charactersIn: "/?#")
        return s
    }()
}
