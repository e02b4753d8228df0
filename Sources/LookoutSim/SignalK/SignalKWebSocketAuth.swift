import Foundation
import LookoutWire

/// Access requests and login over the stream (`ws.ts` `processAccessRequest`,
/// `processLoginRequest`): the replies go to the socket, and a token they give authenticates it
/// in place (`authorizeWS`).
enum SignalKWebSocketAuth {
    /// `{"requestId":…, "accessRequest":{"clientId","description","permissions"?}}`.
    static func accessRequest(_ body: JSONValue, requestId: JSONValue?, conn: SKConnection, ip: String, sim: SignalKSimulator) async {
        let id = requestId?.stringValue
        guard sim.options.security else {
            // The dummy security strategy's reply, without the requestId.
            conn.send(["state": "COMPLETED", "statusCode": 404,
                       "message": "Access requests not available. Server security may not be enabled."])
            return
        }
        func completed(_ status: Int, _ message: String) -> JSONValue {
            var o: [String: JSONValue] = ["state": "COMPLETED", "statusCode": .int(Int64(status)), "message": .string(message)]
            if let id { o["requestId"] = .string(id) }
            return .object(o)
        }
        guard await sim.hub.beginAccessRequest(conn.id) else {
            conn.send(completed(400, "A request has already been submitted"))
            return
        }
        let auth = sim.authority, hub = sim.hub, connID = conn.id
        if await auth.pendingAccessCount >= 100 {
            await hub.endAccessRequest(connID)
            conn.send(completed(502, "Too many pending access requests"))
            return
        }
        let sink: @Sendable (JSONValue) -> Void = { reply in
            guard reply["state"] == "COMPLETED" else { conn.send(reply); return }
            Task {
                await hub.endAccessRequest(connID)
                if let token = reply["accessRequest"]?["token"]?.stringValue, case .ok(let p) = await auth.check(token: token) {
                    await hub.authorize(connID, permission: p.permission)
                }
                conn.send(reply)
            }
        }
        _ = await auth.submitAccess(body: body, ip: ip, requestId: id, sink: sink)
    }

    /// `{"requestId":…, "login":{"username","password"}}` (security on).
    static func login(_ body: JSONValue, requestId: JSONValue?, conn: SKConnection, sim: SignalKSimulator) async {
        let auth = sim.authority
        let token = await auth.login(username: body["username"]?.stringValue, password: body["password"]?.stringValue)
        var reply: [String: JSONValue] = ["state": "COMPLETED", "statusCode": token == nil ? 401 : 200, "login": [:]]
        if let id = requestId?.stringValue { reply["requestId"] = .string(id) }
        if let token {
            reply["login"] = ["timeToLive": nil, "token": .string(token)]
            if case .ok(let p) = await auth.check(token: token) { await sim.hub.authorize(conn.id, permission: p.permission) }
        }
        conn.send(.object(reply))
    }
}
