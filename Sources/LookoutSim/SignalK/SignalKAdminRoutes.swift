import Foundation
import LookoutWire

/// A device's access request as it arrives (for printing; the token comes only with approval).
public struct SignalKAccessRequestNotice: Sendable, Equatable {
    /// The device's clientId (what the admin approves or denies).
    public var clientId: String
    /// The description the device gave, e.g. "Helm iPad".
    public var description: String
    /// The permissions the device asked for, if any (`readonly`, `readwrite`, `admin`).
    public var permissions: String?
    /// The device's address.
    public var ip: String
    /// The request id (`/signalk/v1/requests/<requestId>` is what the device polls).
    public var requestId: String
}

/// signalk-server's admin routes the simulator has (security on): `GET /skServer/loginStatus`,
/// `GET /skServer/security/access/requests` and
/// `PUT /skServer/security/access/requests/<clientId>/<approved|denied>` (also without the
/// `/skServer` prefix, as the server keeps for old clients).
enum SignalKAdminRoutes {
    static let unavailable = SimResponse.json(
        404, ["message": "Access requests not available. Server security may not be enabled."])

    /// The principal of a request that may configure the server (an `admin` token), or the 401
    /// answer (`checkAllowConfigure`).
    static func admin(_ req: SimRequest, sim: SignalKSimulator) async -> SimResponse? {
        if case .ok(let p) = await sim.authority.check(headers: req.headers), p.permission == "admin" { return nil }
        return .json(401, "Security config not allowed")
    }

    /// `GET /skServer/security/access/requests`: the pending access requests.
    static func list(_ req: SimRequest, sim: SignalKSimulator) async -> SimResponse {
        guard sim.options.security else { return unavailable }
        if let refused = await admin(req, sim: sim) { return refused }
        return .json(200, await sim.authority.pendingAccessList())
    }

    /// `PUT …/access/requests/<clientId>/<approved|denied>` with `{"permissions":…, "expiration":…}`
    /// (`expiration`: `NEVER` or a duration such as `1y`, `30d`, `12h`, `90m`, `3600s`).
    /// 200 `Request updated` (text), 500 `Unable update request` for an unknown clientId, status or
    /// permissions value, as signalk-server.
    static func decide(_ req: SimRequest, sim: SignalKSimulator) async -> SimResponse {
        guard sim.options.security else { return unavailable }
        if let refused = await admin(req, sim: sim) { return refused }
        let clientId = req.parameters["clientId"] ?? ""
        let status = req.parameters["status"] ?? ""
        let failed = SimResponse.text(500, "Unable update request")
        guard let requested = await sim.authority.pendingRequestedPermissions(clientId: clientId) else { return failed }
        let body = req.json
        switch status {
        case "approved":
            let chosen = body?["permissions"]?.stringValue
            if requested == nil, !["readonly", "readwrite", "admin"].contains(chosen ?? "") { return failed }
            var expiresIn: TimeInterval? = nil
            if let e = body?["expiration"]?.stringValue, e.uppercased() != "NEVER" {
                guard let seconds = duration(e) else { return failed }
                expiresIn = seconds
            }
            guard await sim.approveAccessRequest(clientId: clientId, permissions: chosen, expiresIn: expiresIn) else {
                return failed
            }
        case "denied":
            guard await sim.denyAccessRequest(clientId: clientId) else { return failed }
        default:
            return failed
        }
        return .text(200, "Request updated")
    }

    /// Seconds of a `ms`-package duration (`1y`, `30d`, `12h`, `90m`, `45s`, `500ms`, a bare
    /// number of milliseconds), or nil.
    static func duration(_ s: String) -> TimeInterval? {
        let t = s.trimmingCharacters(in: .whitespaces).lowercased()
        let digits = t.prefix { $0.isNumber || $0 == "." }
        guard let n = Double(digits), n >= 0 else { return nil }
        let unit = t.dropFirst(digits.count).trimmingCharacters(in: .whitespaces)
        let factors: [String: Double] = [
            "": 0.001, "ms": 0.001, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600, "d": 86400,
            "w": 604_800, "y": 31_557_600,
        ]
        return factors[unit].map { n * $0 }
    }

    /// `GET /skServer/loginStatus`.
    static func loginStatus(_ req: SimRequest, sim: SignalKSimulator) async -> SimResponse {
        let o = sim.options
        var r: [String: JSONValue] = [
            "status": "notLoggedIn", "readOnlyAccess": .bool(o.allowReadOnly), "authenticationRequired": .bool(o.security),
            "allowNewUserRegistration": false, "allowDeviceAccessRequests": .bool(o.security),
        ]
        if o.security, case .ok(let p) = await sim.authority.check(headers: req.headers) {
            r["status"] = "loggedIn"
            r["userLevel"] = .string(p.permission)
            r["username"] = .string(p.name)
        }
        return .json(200, .object(r))
    }
}
