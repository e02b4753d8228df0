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

/// `PUT /signalk/v1/api/<context>/<path>` (§4.2).
enum SignalKPutRoute {
    static func handle(
        path: String, body: Data, client: String, user: String?, sim: SignalKSimulator
    ) async -> SimResponse {
        let prefix = "/signalk/v1/api/"
        let segs = path.dropFirst(prefix.count).split(separator: "/").map {
            String($0).removingPercentEncoding ?? String($0)
        }
        guard segs.count >= 3 else { return .text(400, "invalid path") }
        let context = segs[0] + "." + segs[1]
        let skPath = segs.dropFirst(2).joined(separator: ".")
        guard let json = body.isEmpty ? nil : try? JSONValue.parse(body), let value = json["value"] else {
            return .text(400, "input is missing a value")
        }
        let auth = sim.authority
        let id = UUID().uuidString.lowercased()
        guard context == "vessels.self", let handler = sim.options.putHandlers[skPath] else {
            let reply = await auth.addRequest(
                id: id, kind: .put, state: "COMPLETED", statusCode: 405, message: "PUT not supported for \(skPath)",
                ip: client, user: user)
            return .json(405, reply)
        }
        let request = SignalKPutRequest(
            requestId: id, context: context, path: skPath, value: value, source: json["source"]?.stringValue)
        // Registered as PENDING first, so a handler may finish its own request before it returns.
        _ = await auth.addRequest(id: id, kind: .put, state: "PENDING", statusCode: 202, message: nil, ip: client, user: user)
        switch await handler(request) {
        case .completed(let code, let message):
            _ = await auth.completeRequest(id, statusCode: code, message: message)
        case .pending:
            break
        }
        let reply = await auth.reply(id) ?? .object([:])
        return .json(reply["statusCode"]?.int64Value.map { Int($0) } ?? 202, reply)
    }
}
