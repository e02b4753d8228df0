import Foundation
import LookoutWire

/// Request messages a client sends on the stream (§4.3, §5, §6.2, §7): `put`, `query`, `login`
/// and `accessRequest`. Everything else (subscriptions, deltas) goes to the hub.
enum SignalKWebSocketRequests {
    /// Handles `text` when it is a request message; false when the hub should have it (also after a
    /// `login` or `accessRequest` that came with subscriptions or deltas). `ip` is the client's.
    static func handle(_ text: String, conn: SKConnection, ip: String, sim: SignalKSimulator) async -> Bool {
        guard let msg = try? JSONValue.parse(text), let obj = msg.objectValue else { return false }
        if obj["accessRequest"] != nil || obj["login"] != nil {
            if let request = obj["accessRequest"], request != .null {
                await SignalKWebSocketAuth.accessRequest(request, requestId: obj["requestId"], conn: conn, ip: ip, sim: sim)
            }
            if let login = obj["login"], login != .null, sim.options.security {
                await SignalKWebSocketAuth.login(login, requestId: obj["requestId"], conn: conn, sim: sim)
            }
            if obj["put"] == nil { return obj["updates"] == nil && obj["subscribe"] == nil && obj["unsubscribe"] == nil }
        }
        if let put = obj["put"], obj["updates"] == nil {
            await self.put(put, requestId: obj["requestId"]?.stringValue, context: obj["context"]?.stringValue,
                           conn: conn, sim: sim)
            return true
        }
        if let id = obj["requestId"]?.stringValue, obj["put"] == nil, obj["updates"] == nil, obj["query"] == nil,
            obj["state"] != nil || obj["statusCode"] != nil
        {
            // A reply to a PUT forwarded to this socket (§4.4); anything else with a requestId is ignored.
            _ = await sim.authority.clientReply(
                id, from: conn.id, state: obj["state"]?.stringValue,
                statusCode: obj["statusCode"]?.int64Value.map { Int($0) }, message: obj["message"]?.stringValue)
            return true
        }
        if let id = obj["requestId"]?.stringValue, obj["query"] == .bool(true) {
            conn.send(await sim.authority.reply(id) ?? ["requestId": .string(id), "statusCode": 404])
            return true
        }
        return false
    }

    /// `{"requestId":…, "context":"vessels.self", "put":{"path":…, "value":…, "source"?:…}}`:
    /// the replies go to the socket with the same `requestId` and are also polled at
    /// `/signalk/v1/requests/<requestId>`. A socket that may not write (security on, no
    /// `readwrite`/`admin` token) gets COMPLETED 403.
    static func put(_ put: JSONValue, requestId: String?, context: String?, conn: SKConnection, sim: SignalKSimulator) async {
        let id = requestId ?? UUID().uuidString.lowercased()
        guard let path = put["path"]?.stringValue else {
            conn.send(["requestId": .string(id), "state": "COMPLETED", "statusCode": 502, "message": "put.path is missing"])
            return
        }
        let access = await sim.hub.access(of: conn.id) ?? .open
        guard access.mayWrite else {
            let reply = await sim.authority.addRequest(
                id: id, kind: .put, state: "COMPLETED", statusCode: 403, message: nil, ip: nil, user: nil)
            conn.send(reply)
            return
        }
        _ = await SignalKPutRoute.perform(
            context: context ?? "vessels.self", path: path, value: put["value"] ?? .null,
            source: put["source"]?.stringValue, requestId: id, user: nil, sim: sim, sink: { conn.send($0) })
    }
}
