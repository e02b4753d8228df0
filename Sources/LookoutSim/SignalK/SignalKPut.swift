import Foundation
import LookoutWire

/// A PUT the simulator received (§4.2), as a handler sees it.
public struct SignalKPutRequest: Sendable {
    /// The server's request id (also the last segment of the reply's `href`).
    public var requestId: String
    /// The context from the URL's first two segments, e.g. `vessels.self`.
    public var context: String
    /// The dotted path, e.g. `electrical.switches.anchorLight.state`.
    public var path: String
    /// The body's `value`.
    public var value: JSONValue
    /// The body's `source`, if sent.
    public var source: String?
}

/// What a PUT handler answers (signalk-server action handlers).
public enum SignalKPutOutcome: Sendable, Equatable {
    /// Finished synchronously: 200 (success), 400 (rejected), 502 (device failure), …; the HTTP
    /// status equals `statusCode`.
    case completed(statusCode: Int = 200, message: String? = nil)
    /// Asynchronous: 202 PENDING with an `href` to poll; finish it later with
    /// ``SignalKSimulator/completeRequest(_:statusCode:message:)``.
    case pending
}

/// A PUT action handler, registered by dotted path under the literal context `vessels.self`.
public typealias SignalKPutHandler = @Sendable (SignalKPutRequest) async -> SignalKPutOutcome

/// `PUT /signalk/v1/api/<context>/<path>` (§4.2) and the WebSocket `put` (§4.3), one core as
/// signalk-server's `putPath`.
enum SignalKPutRoute {
    static func handle(
        path: String, body: Data, client: String, user: String?, sim: SignalKSimulator
    ) async -> SimResponse {
        let prefix = "/signalk/v1/api/"
        let segs = path.dropFirst(prefix.count).split(separator: "/").map {
            String($0).removingPercentEncoding ?? String($0)
        }
        guard let json = body.isEmpty ? nil : try? JSONValue.parse(body), let value = json["value"] else {
            return .text(400, "input is missing a value")
        }
        guard segs.count >= 3 else { return .text(400, "invalid path") }
        let context = segs[0] + "." + segs[1]
        let skPath = segs.dropFirst(2).joined(separator: ".")
        let reply = await perform(
            context: context, path: skPath, value: value, source: json["source"]?.stringValue, requestId: nil,
            user: user, sim: sim, sink: nil)
        return .json(reply["statusCode"]?.int64Value.map { Int($0) } ?? 202, reply)
    }

    /// Runs a PUT: metadata (`…/meta`, `…/meta/<key>`: ``putMeta``), the handler registered for
    /// the path under the literal `vessels.self`, or the 405 reply. `sink` (a WebSocket) gets every state change of the request as it happens, as the
    /// server's `updateCb`: one COMPLETED frame, or PENDING and later COMPLETED. Returns the reply
    /// the HTTP PUT answers with (a PENDING one also carries `action.href`).
    static func perform(
        context: String, path skPath: String, value: JSONValue, source: String?, requestId: String?,
        user: String?, sim: SignalKSimulator, sink: (@Sendable (JSONValue) -> Void)?
    ) async -> JSONValue {
        let auth = sim.authority
        let id = requestId ?? UUID().uuidString.lowercased()
        if isMeta(skPath) {
            return await putMeta(id: id, context: context, path: skPath, value: value, user: user, sim: sim, sink: sink)
        }
        guard context == "vessels.self", let handler = sim.options.putHandlers[skPath] else {
            if let target = await sim.hub.putTarget(path: skPath, source: source) {
                return await forward(
                    id: id, context: context, path: skPath, value: value, target: target, user: user, sim: sim, sink: sink)
            }
            let reply = await auth.addRequest(
                id: id, kind: .put, state: "COMPLETED", statusCode: 405, message: "PUT not supported for \(skPath)",
                ip: nil, user: user)
            sink?(reply)
            return reply
        }
        let request = SignalKPutRequest(requestId: id, context: context, path: skPath, value: value, source: source)
        // Registered as PENDING first (without telling the sink, as `createRequest`), so a handler
        // may finish its own request before it returns.
        _ = await auth.addRequest(
            id: id, kind: .put, state: "PENDING", statusCode: 202, message: nil, ip: nil, user: user, sink: sink)
        switch await handler(request) {
        case .completed(let code, let message):
            _ = await auth.completeRequest(id, statusCode: code, message: message)
        case .pending:
            if let reply = await auth.reply(id) { sink?(reply) }
        }
        return withAction(await auth.reply(id) ?? .object([:]), id)
    }

    /// A PENDING reply as the HTTP PUT answers it: with `action.href`.
    static func withAction(_ reply: JSONValue, _ id: String) -> JSONValue {
        guard reply["state"] == "PENDING", var o = reply.objectValue else { return reply }
        o["action"] = ["href": .string(SignalKAuthority.href(id))]
        return .object(o)
    }

    /// §4.4: sends the PUT to the socket that publishes the path, as
    /// `{"requestId","context","put":[{"path","value"}]}`; its replies with that `requestId` update
    /// the request; still PENDING after `Options.putForwardTimeout` → COMPLETED 504.
    static func forward(
        id: String, context: String, path: String, value: JSONValue, target: Result<SKConnection, SignalKPutForwardError>,
        user: String?, sim: SignalKSimulator, sink: (@Sendable (JSONValue) -> Void)?
    ) async -> JSONValue {
        let auth = sim.authority
        guard case .success(let conn) = target else {
            let reply = await auth.addRequest(
                id: id, kind: .put, state: "COMPLETED", statusCode: 400,
                message: "there are multiple sources for the given path, but no source was specified in the request",
                ip: nil, user: user)
            sink?(reply)
            return reply
        }
        let reply = await auth.addRequest(
            id: id, kind: .put, state: "PENDING", statusCode: 202, message: nil, ip: nil, user: user, sink: sink,
            forwardedTo: conn.id)
        conn.send(["requestId": .string(id), "context": .string(context), "put": [["path": .string(path), "value": value]]])
        sink?(reply)
        let timeout = sim.options.putForwardTimeout
        Task {
            try? await Task.sleep(for: timeout)
            _ = await auth.completeRequest(id, statusCode: 504, message: nil)
        }
        return withAction(reply, id)
    }
}

/// Why a PUT cannot be forwarded to a publishing socket.
enum SignalKPutForwardError: Error, Sendable {
    /// Several sources publish the path and the PUT named none.
    case multipleSources
}
