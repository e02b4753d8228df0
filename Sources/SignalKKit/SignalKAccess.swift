import Foundation
import LookoutWire

/// The permission asked for in an access request.
public enum SignalKPermission: String, Sendable, Hashable {
    /// Read only.
    case readonly
    /// Read, send deltas and PUT.
    case readwrite
    /// Everything, including configuration.
    case admin
}

/// The state of a device access request (contract §6).
public enum SignalKAccessState: Sendable, Equatable {
    /// Waiting for the administrator; poll `href`.
    case pending(href: String)
    /// Approved; the token has been stored.
    case approved
    /// Denied; the DENIED flag has been stored.
    case denied
}

/// The result of a login with user name and password.
public struct SignalKLoginResult: Sendable, Equatable, CustomStringConvertible {
    /// The token (a JWT). Not shown by `description`.
    public var token: String
    /// The token's lifetime in seconds, `nil` when it never expires.
    public var timeToLive: Double?
    /// A summary without the token.
    public var description: String { "SignalKLoginResult(timeToLive: \(timeToLive.map { "\($0)" } ?? "never"))" }
}

/// Device access requests and user login (contract §6, §7). Tokens go into a ``SignalKTokenStore``
/// together with the persistent `clientId`, the pending `href` and the DENIED flag.
public struct SignalKAccess: Sendable {
    /// The server root, e.g. `http://192.168.1.10:3000`.
    public let server: URL
    /// Where the clientId and token are kept.
    public let tokenStore: SignalKTokenStore
    let transport: any SignalKHTTPTransport
    let sleep: SignalKSleep

    /// Creates the client. `sleep` is injectable for tests.
    public init(server: URL, tokenStore: SignalKTokenStore,
                transport: any SignalKHTTPTransport = SignalKAsyncHTTPTransport(), sleep: SignalKSleep? = nil) {
        self.server = server; self.tokenStore = tokenStore; self.transport = transport
        self.sleep = sleep ?? SignalKHTTP.realSleep
    }

    /// The body of an access request: `{"clientId":…, "description":…, "permissions"?:…}`.
    public static func requestBody(clientId: String, description: String, permissions: SignalKPermission?) -> JSONValue {
        var o: [String: JSONValue] = ["clientId": .string(clientId), "description": .string(description)]
        if let permissions { o["permissions"] = .string(permissions.rawValue) }
        return .object(o)
    }

    /// Sends `POST /signalk/v1/access/requests` (unless a request is already pending, or a token is
    /// stored) and returns the state. Throws ``SignalKClientError/accessDenied`` when DENIED is stored,
    /// ``SignalKClientError/accessRequestsUnavailable(status:)`` for 404/501 (security off),
    /// ``SignalKClientError/accessRequestsRefused(message:)`` for 403.
    public func submit(description: String, permissions: SignalKPermission? = nil) async throws -> SignalKAccessState {
        let rec = try await tokenStore.load()
        if rec.denied { throw SignalKClientError.accessDenied }
        if await tokenStore.token() != nil { return .approved }
        if let href = rec.pendingHref { return .pending(href: href) }
        let req = SignalKHTTPRequest(
            method: "POST", url: server.appendingPathComponent("signalk/v1/access/requests"),
            headers: [SignalKHTTPHeader("Accept", "application/json"), SignalKHTTPHeader("Content-Type", "application/json")],
            body: SignalKHTTP.jsonBody(Self.requestBody(clientId: rec.clientId, description: description, permissions: permissions)))
        let r = try await transport.send(req, timeout: .seconds(10))
        switch r.status {
        case 404, 501: throw SignalKClientError.accessRequestsUnavailable(status: r.status)
        case 403: throw SignalKClientError.accessRequestsRefused(message: SignalKHTTP.message(r.body))
        default: break
        }
        let json = SignalKHTTP.json(r.body)
        if (200..<300).contains(r.status), let j = json {
            if let state = try await apply(j) { return state }
            if let href = j["href"]?.stringValue {
                try await tokenStore.setPendingHref(href)
                return .pending(href: href)
            }
        }
        throw SignalKHTTP.error(r, req)
    }

    /// Polls a pending request once (`GET <href>`). A 500 (the server forgot the request: restart or
    /// pruning) clears the stored href so the next ``submit(description:permissions:)`` starts anew,
    /// and is rethrown.
    public func poll(href: String) async throws -> SignalKAccessState {
        guard let url = URL(string: href, relativeTo: server)?.absoluteURL else { throw SignalKClientError.invalidURL("bad href") }
        let req = SignalKHTTPRequest(method: "GET", url: url, headers: [SignalKHTTPHeader("Accept", "application/json")])
        let r = try await transport.send(req, timeout: .seconds(10))
        guard (200..<300).contains(r.status), let j = SignalKHTTP.json(r.body) else {
            if r.status == 500 || r.status == 404 { try await tokenStore.setPendingHref(nil) }
            throw SignalKHTTP.error(r, req)
        }
        return try await apply(j) ?? .pending(href: href)
    }

    /// Interprets a reply: COMPLETED with `accessRequest.permission` APPROVED (stores the token) or
    /// DENIED (stores the flag); `nil` while PENDING.
    func apply(_ j: JSONValue) async throws -> SignalKAccessState? {
        guard j["state"]?.stringValue == "COMPLETED" || j["state"]?.stringValue == "FAILED" else { return nil }
        let ar = j["accessRequest"]
        switch ar?["permission"]?.stringValue {
        case "APPROVED":
            guard let token = ar?["token"]?.stringValue else {
                throw SignalKClientError.invalidResponse("APPROVED without token")
            }
            let exp = ar?["expirationTime"]?.stringValue.flatMap(SignalKTimestamp.parse)
            try await tokenStore.setToken(token, expires: exp)
            return .approved
        case "DENIED":
            try await tokenStore.setDenied(true)
            return .denied
        default:
            let code = (j["statusCode"] ?? j["result"])?.intValue
            throw SignalKClientError.requestFailed(state: j["state"]?.stringValue, statusCode: code,
                                                   message: SignalKClientError.clip(j["message"]?.stringValue))
        }
    }

    /// Requests access and waits for the administrator: submits (or resumes the stored pending
    /// request) and polls every `pollInterval` (never faster than once a second) until APPROVED
    /// (returns the token, also stored) or DENIED (throws ``SignalKClientError/accessDenied``), or
    /// `timeout` (throws ``SignalKClientError/timeout(_:)``; the pending href stays stored).
    /// `onState` sees every state.
    @discardableResult
    public func requestAccess(description: String, permissions: SignalKPermission? = nil,
                              pollInterval: Duration = .seconds(2), timeout: Duration = .seconds(600),
                              onState: (@Sendable (SignalKAccessState) -> Void)? = nil) async throws -> String
    {
        let interval = max(pollInterval, .seconds(1))
        var waited = Duration.zero
        var state = try await submit(description: description, permissions: permissions)
        while true {
            onState?(state)
            switch state {
            case .approved:
                guard let t = await tokenStore.token() else { throw SignalKClientError.invalidResponse("token not stored") }
                return t
            case .denied:
                throw SignalKClientError.accessDenied
            case .pending(let href):
                if waited + interval > timeout { throw SignalKClientError.timeout("access request still pending") }
                try await sleep(interval)
                waited += interval
                state = try await poll(href: href)
            }
        }
    }

    /// The body of a login: `{"username":…, "password":…, "rememberMe":false}`.
    public static func loginBody(username: String, password: String) -> JSONValue {
        ["username": .string(username), "password": .string(password), "rememberMe": false]
    }

    /// Logs in with a user name and password (`POST /signalk/v1/auth/login`, JSON) and stores the
    /// token. Throws ``SignalKClientError/unauthorized(status:message:)`` for bad credentials.
    @discardableResult
    public func login(username: String, password: String) async throws -> SignalKLoginResult {
        let req = SignalKHTTPRequest(
            method: "POST", url: server.appendingPathComponent("signalk/v1/auth/login"),
            headers: [SignalKHTTPHeader("Accept", "application/json"), SignalKHTTPHeader("Content-Type", "application/json")],
            body: SignalKHTTP.jsonBody(Self.loginBody(username: username, password: password)))
        let r = try await transport.send(req, timeout: .seconds(10))
        guard (200..<300).contains(r.status) else { throw SignalKHTTP.error(r, req) }
        guard let j = SignalKHTTP.json(r.body), let token = j["token"]?.stringValue else {
            throw SignalKClientError.invalidResponse("login reply without token")
        }
        let ttl = j["timeToLive"]?.doubleValue
        try await tokenStore.setToken(token, expires: ttl.map { Date().addingTimeInterval($0) })
        return SignalKLoginResult(token: token, timeToLive: ttl)
    }

    /// Forgets the stored token (the JWT itself stays valid on the server; tokens are stateless).
    public func logout() async throws { try await tokenStore.setToken(nil) }
}
