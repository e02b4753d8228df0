import Crypto
import Foundation
import Hummingbird
import LookoutWire

/// What the Signal K simulator's tokens depend on, to keep them valid across restarts
/// (`lookout sim signalk --state DIR`): the key tokens are signed with and the approved devices.
public struct SignalKSecurityState: Sendable, Codable, Equatable {
    /// The HS256 signing key (32 bytes).
    public var signingKey: Data
    /// Approved devices: clientId → permission (`readonly`, `readwrite`, `admin`).
    public var devices: [String: String]

    /// A state with a fresh random key and no devices.
    public init() {
        self.init(signingKey: SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }, devices: [:])
    }

    /// A state with the given key and devices.
    public init(signingKey: Data, devices: [String: String]) {
        self.signingKey = signingKey
        self.devices = devices
    }
}

/// Requests (§5), access requests (§6.1), login (§7) and tokens (§8) of the Signal K simulator.
/// Tokens are HS256 JWTs signed with a per-simulator random key (or `Options.securityState`'s): `{"device":<clientId>,"iat":…,"exp"?:…}`
/// for approved devices, `{"id":<username>,"iat":…}` for users (who are `admin`).
actor SignalKAuthority {
    enum Kind: Sendable { case put, accessRequest }
    struct Record: Sendable {
        var id: String
        var kind: Kind
        var state: String
        var statusCode: Int
        var message: String?
        var ip: String?
        var user: String?
        var accessRequest: JSONValue?
        var clientId: String?
        /// Where state changes go (a WebSocket that sent the request).
        var sink: (@Sendable (JSONValue) -> Void)?
        /// The socket a forwarded PUT went to (only its replies update the request).
        var forwardedTo: Int?
    }
    struct AccessRequest: Sendable {
        var clientId: String
        var description: String
        var permissions: String?
        var requestId: String
        var ip: String = ""
        var date = Date()
    }
    /// A caller identified by its token.
    struct Principal: Sendable {
        var name: String
        var permission: String
    }
    enum TokenCheck: Sendable { case none, bad, ok(Principal) }

    private let key: SymmetricKey
    private let clock: @Sendable () -> Date
    private let users: [String: String]
    private let roles: [String: String]
    private let onAccessRequest: (@Sendable (SignalKAccessRequestNotice) -> Void)?
    private let onStateChange: (@Sendable (SignalKSecurityState) -> Void)?
    private var requests: [String: Record] = [:]
    private var order: [String] = []
    private var pendingAccess: [String: AccessRequest] = [:]  // by clientId
    private var devices: [String: String] = [:]  // clientId → permission
    /// `POST /signalk/v1/access/requests` received (accepted or not).
    private(set) var accessRequestsReceived = 0

    init(
        users: [String: String], roles: [String: String] = [:], clock: @escaping @Sendable () -> Date,
        onAccessRequest: (@Sendable (SignalKAccessRequestNotice) -> Void)? = nil,
        state: SignalKSecurityState? = nil, onStateChange: (@Sendable (SignalKSecurityState) -> Void)? = nil
    ) {
        self.users = users
        self.roles = roles
        self.clock = clock
        self.onAccessRequest = onAccessRequest
        self.onStateChange = onStateChange
        key = state.map { SymmetricKey(data: $0.signingKey) } ?? SymmetricKey(size: .bits256)
        devices = state?.devices ?? [:]
    }

    /// What tokens depend on: the signing key and the approved devices.
    var state: SignalKSecurityState {
        SignalKSecurityState(signingKey: key.withUnsafeBytes { Data($0) }, devices: devices)
    }

    // MARK: requests (§5)

    static func href(_ id: String) -> String { "/signalk/v1/requests/\(id)" }

    static func json(_ r: Record) -> JSONValue {
        var o: [String: JSONValue] = [
            "state": .string(r.state), "requestId": .string(r.id), "statusCode": .int(Int64(r.statusCode)),
            "href": .string(href(r.id)),
        ]
        if let m = r.message { o["message"] = .string(m) }
        if let ip = r.ip { o["ip"] = .string(ip) }
        if let u = r.user { o["user"] = .string(u) }
        if let a = r.accessRequest { o["accessRequest"] = a }
        return .object(o)
    }

    func addRequest(
        id: String, kind: Kind, state: String, statusCode: Int, message: String?, ip: String?, user: String?,
        clientId: String? = nil, sink: (@Sendable (JSONValue) -> Void)? = nil, forwardedTo: Int? = nil
    ) -> JSONValue {
        let r = Record(
            id: id, kind: kind, state: state, statusCode: statusCode, message: message, ip: ip, user: user,
            clientId: clientId, sink: sink, forwardedTo: forwardedTo)
        requests[id] = r
        order.append(id)
        return Self.json(r)
    }

    func reply(_ id: String) -> JSONValue? { requests[id].map(Self.json) }

    func completeRequest(_ id: String, statusCode: Int, message: String?) -> Bool {
        guard var r = requests[id], r.kind == .put, r.state == "PENDING" else { return false }
        r.state = "COMPLETED"
        r.statusCode = statusCode
        r.message = message
        requests[id] = r
        r.sink?(Self.json(r))
        return true
    }

    /// A reply from the socket a PUT was forwarded to (§4.4): updates the request (and tells
    /// the requester). False when `id` is no pending PUT forwarded to `connection`.
    func clientReply(_ id: String, from connection: Int, state: String?, statusCode: Int?, message: String?) -> Bool {
        guard var r = requests[id], r.kind == .put, r.state == "PENDING", r.forwardedTo == connection else { return false }
        if let state { r.state = state }
        if let statusCode { r.statusCode = statusCode }
        if let message { r.message = message }
        requests[id] = r
        r.sink?(Self.json(r))
        return true
    }

    func pendingPutIDs() -> [String] {
        order.filter { requests[$0]?.kind == .put && requests[$0]?.state == "PENDING" }
    }

    // MARK: access requests (§6.1)

    /// An access request (HTTP body, or a WebSocket message's `accessRequest` with its
    /// `requestId` and a `sink` that hears every state of the request).
    func submitAccess(
        body: JSONValue?, ip: String, requestId: String? = nil, sink: (@Sendable (JSONValue) -> Void)? = nil
    ) -> (Int, JSONValue) {
        accessRequestsReceived += 1
        let id = requestId ?? UUID().uuidString.lowercased()
        func fail(_ message: String) -> (Int, JSONValue) {
            let reply = addRequest(id: id, kind: .accessRequest, state: "COMPLETED", statusCode: 400, message: message,
                                   ip: ip, user: nil)
            sink?(reply)
            return (400, reply)
        }
        guard let clientId = body?["clientId"]?.stringValue, !clientId.isEmpty else {
            return fail("A clientId is required")
        }
        guard let description = body?["description"]?.stringValue, !description.isEmpty else {
            return fail("A description is required")
        }
        var permissions: String?
        if let p = body?["permissions"] {
            guard let s = p.stringValue, ["readonly", "readwrite", "admin"].contains(s) else {
                return fail("Invalid permission")
            }
            permissions = s
        }
        if pendingAccess[clientId] != nil {
            return fail("A device with clientId '\(clientId)' has already requested access")
        }
        pendingAccess[clientId] = AccessRequest(
            clientId: clientId, description: description, permissions: permissions, requestId: id, ip: ip,
            date: clock())
        onAccessRequest?(SignalKAccessRequestNotice(
            clientId: clientId, description: description, permissions: permissions, ip: ip, requestId: id))
        let reply = addRequest(id: id, kind: .accessRequest, state: "PENDING", statusCode: 202, message: nil,
                               ip: ip, user: nil, clientId: clientId, sink: sink)
        sink?(reply)
        return (202, reply)
    }

    var pendingAccessCount: Int { pendingAccess.count }

    func pendingAccessClientIDs() -> [String] { pendingAccess.keys.sorted() }

    /// The pending access requests as `GET /skServer/security/access/requests` lists them.
    func pendingAccessList() -> JSONValue {
        .array(pendingAccess.values.sorted { $0.date < $1.date }.map { ar in
            var o: [String: JSONValue] = [
                "requestId": .string(ar.requestId), "type": "accessRequest", "state": "PENDING", "statusCode": 202,
                "ip": .string(ar.ip), "date": .string(SKTime.iso(ar.date)),
                "accessIdentifier": .string(ar.clientId), "accessDescription": .string(ar.description),
                "requestedPermissions": .bool(ar.permissions != nil),
            ]
            if let p = ar.permissions { o["permissions"] = .string(p) }
            return .object(o)
        })
    }

    /// Whether `clientId` has a pending request that asked for permissions itself.
    func pendingRequestedPermissions(clientId: String) -> String?? {
        pendingAccess[clientId].map { $0.permissions }
    }

    func decideAccess(clientId: String, approve: Bool, permissions: String?, expiresIn: TimeInterval?) -> Bool {
        guard let ar = pendingAccess.removeValue(forKey: clientId), var r = requests[ar.requestId] else { return false }
        r.state = "COMPLETED"
        r.statusCode = 200
        if approve {
            // As signalk-server: what the device asked for wins over the admin's choice.
            let permission = ar.permissions ?? permissions ?? "readonly"
            devices[clientId] = permission
            onStateChange?(state)
            var payload: [String: JSONValue] = ["device": .string(clientId), "iat": .int(Int64(clock().timeIntervalSince1970))]
            if let expiresIn { payload["exp"] = .int(Int64(clock().timeIntervalSince1970 + expiresIn)) }
            r.accessRequest = ["permission": "APPROVED", "token": .string(sign(.object(payload)))]
        } else {
            r.accessRequest = ["permission": "DENIED"]
        }
        requests[ar.requestId] = r
        r.sink?(Self.json(r))
        return true
    }

    func revokeDevice(clientId: String) -> Bool {
        guard devices.removeValue(forKey: clientId) != nil else { return false }
        onStateChange?(state)
        return true
    }

    // MARK: login (§7)

    func login(username: String?, password: String?) -> String? {
        guard let username, let password, let stored = users[username], stored == password else { return nil }
        return sign(["id": .string(username), "iat": .int(Int64(clock().timeIntervalSince1970))])
    }

    // MARK: tokens (§8)

    private static func b64url(_ d: Data) -> String {
        d.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func unb64url(_ s: Substring) -> Data? {
        var t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while t.count % 4 != 0 { t += "=" }
        return Data(base64Encoded: t)
    }

    func sign(_ payload: JSONValue) -> String {
        let head = Self.b64url(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "." + Self.b64url(payload.jsonData)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(head.utf8), using: key)
        return head + "." + Self.b64url(Data(mac))
    }

    /// Verifies a token: signature, `exp` against the clock, and that the device is still approved or
    /// the user still exists.
    func principal(token: String) -> Principal? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let sig = Self.unb64url(parts[2]), let body = Self.unb64url(parts[1]),
            HMAC<SHA256>.isValidAuthenticationCode(sig, authenticating: Data("\(parts[0]).\(parts[1])".utf8), using: key),
            let payload = try? JSONValue.parse(body)
        else { return nil }
        if let exp = payload["exp"]?.doubleValue, exp <= clock().timeIntervalSince1970 { return nil }
        if let device = payload["device"]?.stringValue, let permission = devices[device] {
            return Principal(name: device, permission: permission)
        }
        if let id = payload["id"]?.stringValue, users[id] != nil {
            return Principal(name: id, permission: roles[id] ?? "admin")
        }
        return nil
    }

    /// The token of a request in signalk-server's order: cookie `JAUTHENTICATION`, then
    /// `Authorization` (`Bearer`/`JWT`), then `X-Authorization`. `?token=` is not accepted on REST.
    static func token(headers: [String: String]) -> String? {
        if let cookie = headers["cookie"] {
            for part in cookie.split(separator: ";") {
                let kv = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if kv.count == 2, kv[0] == "JAUTHENTICATION" { return String(kv[1]) }
            }
        }
        for name in ["authorization", "x-authorization"] {
            guard let v = headers[name] else { continue }
            let words = v.split(separator: " ", maxSplits: 1)
            if words.count == 2, ["bearer", "jwt"].contains(words[0].lowercased()) {
                return words[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    func check(headers: [String: String]) -> TokenCheck { check(token: Self.token(headers: headers)) }

    func check(token: String?) -> TokenCheck {
        guard let token else { return .none }
        return principal(token: token).map { .ok($0) } ?? .bad
    }
}

/// HTTP handlers of requests, access requests, login and the REST security check (§4.2, §5–§8).
enum SignalKSecurityRoutes {
    /// `GET /signalk/v1/requests/<id>`: the reply of a PUT or access request.
    static func requestReply(_ req: SimRequest, sim: SignalKSimulator) async -> SimResponse {
        let prefix = "/signalk/v1/requests/"
        guard req.path.hasPrefix(prefix) else { return SignalKRoutes.notFound(req) }
        let id = String(req.path.dropFirst(prefix.count))
        guard let reply = await sim.authority.reply(id) else { return .text(500, "Unable to check request: not found") }
        return .json(200, reply)
    }

    /// `POST /signalk/v1/access/requests`: a device asks for a token (§6.1).
    static func accessRequest(_ req: SimRequest, sim: SignalKSimulator) async -> SimResponse {
        guard sim.options.security else {
            return .json(404, ["message": "Access requests not available. Server security is not enabled."])
        }
        if req.body.count > 10 * 1024 { return .text(413, "Payload too large") }
        if await sim.authority.pendingAccessCount >= 100 { return .text(503, "Too many pending access requests") }
        let (status, reply) = await sim.authority.submitAccess(body: req.json, ip: req.client)
        return .json(status, reply)
    }

    /// `POST /signalk/v1/auth/login` and `POST /login` (security on).
    static func login(_ req: SimRequest, sim: SignalKSimulator) async -> SimResponse {
        let json = req.json
        guard let token = await sim.authority.login(username: json?["username"]?.stringValue,
                                                    password: json?["password"]?.stringValue)
        else { return .json(401, ["statusCode": 401, "message": "Invalid username/password"]) }
        return .json(200, ["timeToLive": nil, "token": .string(token)],
                     headers: [("Set-Cookie", "JAUTHENTICATION=\(token); Path=/; HttpOnly")])
    }

    /// `PUT /signalk/v1/auth/logout` (security on).
    static func logout(_ req: SimRequest) -> SimResponse {
        .json(200, "Logout OK", headers: [("Set-Cookie", "JAUTHENTICATION=; Path=/; Max-Age=0")])
    }

    /// The REST API's security check (security on): nil when the request may go on; a `PUT` needs
    /// `readwrite` or `admin`.
    static func refusal(method: String, headers: [String: String], sim: SignalKSimulator) async -> SimResponse? {
        switch await sim.authority.check(headers: headers) {
        case .none:
            if sim.options.allowReadOnly, method == "GET" || method == "HEAD" { return nil }
            if sim.options.allowReadOnly, method == "PUT" {
                return (headers["accept"] ?? "").contains("json")
                    ? .json(401, ["error": "Permission Denied"]) : .text(401, "Permission Denied")
            }
            return .text(401, "Unauthorized")
        case .bad: return .text(401, "bad auth token")
        case .ok(let p):
            if method == "PUT", p.permission != "readwrite", p.permission != "admin" {
                return (headers["accept"] ?? "").contains("json")
                    ? .json(401, ["error": "Permission Denied"]) : .text(401, "Permission Denied")
            }
            return nil
        }
    }

    /// The user a REST request is signed in as (security on), for PUT's `source`.
    static func user(_ req: SimRequest, sim: SignalKSimulator) async -> String? {
        guard sim.options.security, case .ok(let p) = await sim.authority.check(headers: req.headers) else { return nil }
        return p.name
    }
}

/// With security on, every request under `/signalk/v1/api/` (matched or not) passes
/// `SignalKSecurityRoutes.refusal` first.
struct SignalKSecurityMiddleware: RouterMiddleware {
    typealias Context = SimRequestContext
    let sim: SignalKSimulator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if request.uri.path.hasPrefix(SignalKRoutes.apiPrefix) {
            var headers: [String: String] = [:]
            for f in request.headers { headers[f.name.canonicalName.lowercased()] = f.value }
            if let refused = await SignalKSecurityRoutes.refusal(method: request.method.rawValue, headers: headers, sim: sim) {
                return refused.httpResponse
            }
        }
        return try await next(request, context)
    }
}

extension SignalKSimulator {
    // MARK: PUT requests (§4.2)

    /// Ids of PUT requests whose handler answered ``SignalKPutOutcome/pending``, oldest first.
    public func pendingPutRequestIDs() async -> [String] { await authority.pendingPutIDs() }

    /// Finishes a pending PUT: polling then shows `COMPLETED` with `statusCode` (200 success, 502
    /// device failure, …). Returns false for unknown or finished requests.
    @discardableResult
    public func completeRequest(_ requestId: String, statusCode: Int = 200, message: String? = nil) async -> Bool {
        await authority.completeRequest(requestId, statusCode: statusCode, message: message)
    }

    /// The current reply of a request as `GET /signalk/v1/requests/<id>` returns it.
    public func requestReply(_ requestId: String) async -> JSONValue? { await authority.reply(requestId) }

    // MARK: access requests (§6.1; the admin side)

    /// How many access requests were posted (accepted, duplicate or invalid), for tests that
    /// check a client does not send one twice.
    public func accessRequestsReceived() async -> Int { await authority.accessRequestsReceived }

    /// ClientIds of pending access requests.
    public func pendingAccessRequests() async -> [String] { await authority.pendingAccessClientIDs() }

    /// Approves a pending access request (like `PUT /skServer/security/access/requests/<clientId>/approved`):
    /// polling then shows `accessRequest` `{"permission":"APPROVED","token":…}`. `permissions` defaults
    /// to the requested ones, else `readonly`; `expiresIn` sets the JWT `exp` (none: never expires).
    @discardableResult
    public func approveAccessRequest(clientId: String, permissions: String? = nil, expiresIn: TimeInterval? = nil)
        async -> Bool
    {
        await authority.decideAccess(clientId: clientId, approve: true, permissions: permissions, expiresIn: expiresIn)
    }

    /// Denies a pending access request: polling then shows `accessRequest` `{"permission":"DENIED"}`.
    @discardableResult
    public func denyAccessRequest(clientId: String) async -> Bool {
        await authority.decideAccess(clientId: clientId, approve: false, permissions: nil, expiresIn: nil)
    }

    /// Removes an approved device: its token then gets 401 `bad auth token`.
    @discardableResult
    public func revokeDevice(clientId: String) async -> Bool { await authority.revokeDevice(clientId: clientId) }
}
