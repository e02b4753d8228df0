import Foundation
import Hummingbird

/// HTTP side of the Signal K simulator: discovery and the REST GET API (§1.2, §4.1); PUT, requests,
/// access requests, login and the token check come first (`SignalKSecurityRoutes`, §4.2, §5–§8).
struct SignalKResponder: HTTPResponder {
    typealias Context = SimRequestContext
    let sim: SignalKSimulator

    func respond(to request: Request, context: SimRequestContext) async throws -> Response {
        var request = request
        let (path, _) = SignalKRoutes.split(request.uri.description)
        var headers: [String: String] = [:]
        for f in request.headers { headers[f.name.canonicalName.lowercased()] = f.value }
        let body = try await request.collectBody(upTo: 1 << 20)
        if let resp = await SignalKSecurityRoutes.handle(
            method: request.method.rawValue, path: path, headers: headers, body: Data(buffer: body),
            client: context.client, sim: sim)
        {
            return NightscoutResponder.convert(resp, mode: .normal)
        }
        let host = request.head.authority ?? headers["host"] ?? "127.0.0.1:\(sim.port)"
        let resp = await SignalKRoutes.route(
            method: request.method.rawValue, path: path, host: host,
            forwardedProto: headers["x-forwarded-proto"], sim: sim)
        return NightscoutResponder.convert(resp, mode: .normal)
    }
}

enum SignalKRoutes {
    /// Splits a request target into path and query.
    static func split(_ target: String) -> (String, String?) {
        guard let q = target.firstIndex(of: "?") else { return (target, nil) }
        return (String(target[..<q]), String(target[target.index(after: q)...]))
    }

    static func notFound(_ method: String, _ path: String) -> SimResponse {
        .text(404, "Cannot \(method) \(path)")
    }

    static func route(method: String, path: String, host: String, forwardedProto: String?, sim: SignalKSimulator) async
        -> SimResponse
    {
        guard method == "GET" || method == "HEAD" else { return notFound(method, path) }
        if path == "/signalk" || path == "/signalk/" {
            let tls = forwardedProto?.lowercased() == "https"
            return .json(
                200,
                [
                    "endpoints": [
                        "v1": [
                            "version": .string(SignalKSimulator.serverVersion),
                            "signalk-http": .string("\(tls ? "https" : "http")://\(host)/signalk/v1/api/"),
                            "signalk-ws": .string("\(tls ? "wss" : "ws")://\(host)/signalk/v1/stream"),
                        ]
                    ],
                    "server": ["id": "signalk-server-node", "version": .string(SignalKSimulator.serverVersion)],
                ])
        }
        let prefix = "/signalk/v1/api/"
        guard path.hasPrefix(prefix) else { return notFound(method, path) }
        let segments = path.dropFirst(prefix.count).split(separator: "/").map {
            String($0).removingPercentEncoding ?? String($0)
        }
        let model = await sim.fullModel()
        if segments.isEmpty { return .json(200, model) }
        if segments == ["self"] { return .json(200, .string(sim.selfContext)) }
        var keys = segments
        if keys.count >= 2, keys[0] == "vessels", keys[1] == "self" { keys[1] = sim.selfID }
        guard let root = model.objectValue, let found = SignalKStore.get(root, keys) else {
            return notFound(method, path)
        }
        return .json(200, found)
    }
}
