import Foundation
import Hummingbird
import LookoutWire

/// Every HTTP route of the Signal K simulator, in one place: discovery, the REST GET API (§1.2,
/// §4.1), PUT (§4.2), requests, access requests and login (§5–§7). With security on, the REST
/// API's token check (`SignalKSecurityMiddleware`) comes first. What no route answers gets
/// signalk-server's `Cannot <METHOD> <path>`. The WebSocket stream is not a route: the server's
/// upgrade check takes `/signalk/v1/stream` first (see `SignalKSimulator.start`).
///
/// The REST API is a tree of any depth, so its routes are `/signalk/v1/api/**` (the segments are
/// `SimRequest.tail`) plus `/signalk/v1/api` for the root; the Router treats `/signalk/v1/api`
/// and `/signalk/v1/api/` alike, so that handler checks the trailing `/` the real server needs.
enum SignalKRoutes {
    /// The largest request body read.
    static let bodyLimit = 1 << 20
    /// The REST API's path prefix.
    static let apiPrefix = "/signalk/v1/api/"

    /// The simulator's router.
    static func router(_ sim: SignalKSimulator) -> Router<SimRequestContext> {
        let o = sim.options
        let router = Router(context: SimRequestContext.self)
        if o.security { router.add(middleware: SignalKSecurityMiddleware(sim: sim)) }
        router.add(middleware: SimNotFoundMiddleware(bodyLimit: bodyLimit) { notFound($0) })
        let routes = SimRoutes(router: router, bodyLimit: bodyLimit)
        routes.on("/signalk", [.get, .head]) { req in discovery(req, sim: sim) }
        for path in ["/signalk/v1/api", "/signalk/v1/api/**"] {
            routes.on(path, [.get, .head]) { req in await get(req, sim: sim) }
            routes.on(path, [.put]) { req in await put(req, sim: sim) }
        }
        for path in ["/signalk/v1/requests", "/signalk/v1/requests/**"] {
            routes.get(path) { req in await SignalKSecurityRoutes.requestReply(req, sim: sim) }
        }
        routes.on("/signalk/v1/access/requests", [.post]) { req in await SignalKSecurityRoutes.accessRequest(req, sim: sim) }
        routes.get("/skServer/loginStatus") { req in await SignalKAdminRoutes.loginStatus(req, sim: sim) }
        routes.get("/skServer/security/access/requests") { req in await SignalKAdminRoutes.list(req, sim: sim) }
        for prefix in ["/skServer", ""] {
            routes.on(prefix + "/security/access/requests/{clientId}/{status}", [.put]) { req in
                await SignalKAdminRoutes.decide(req, sim: sim)
            }
        }
        if o.security {
            for path in ["/signalk/v1/auth/login", "/login"] {
                routes.on(path, [.post]) { req in await SignalKSecurityRoutes.login(req, sim: sim) }
            }
            routes.on("/signalk/v1/auth/logout", [.put]) { req in SignalKSecurityRoutes.logout(req) }
            // A plain HTTP request to the stream path (a refused upgrade is answered by `SignalKUpgradeRefusal`).
            routes.on("/signalk/v1/stream", SimRoutes.anyMethod) { _ in .text(401, "bad auth token") }
        }
        return router
    }

    /// Splits a request target into path and query.
    static func split(_ target: String) -> (String, String?) {
        guard let q = target.firstIndex(of: "?") else { return (target, nil) }
        return (String(target[..<q]), String(target[target.index(after: q)...]))
    }

    /// signalk-server's 404.
    static func notFound(_ req: SimRequest) -> SimResponse {
        .text(404, "Cannot \(req.method) \(req.path)")
    }

    /// `GET /signalk`: the discovery document (`https`/`wss` behind a TLS proxy).
    static func discovery(_ req: SimRequest, sim: SignalKSimulator) -> SimResponse {
        let host = req.header("host") ?? "127.0.0.1:\(sim.port)"
        let tls = req.header("x-forwarded-proto")?.lowercased() == "https"
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

    /// `GET /signalk/v1/api/<path…>`: the full model, `self`, or the subtree at the path
    /// (`vessels/self` is the own vessel).
    static func get(_ req: SimRequest, sim: SignalKSimulator) async -> SimResponse {
        guard req.path.hasPrefix(apiPrefix) else { return notFound(req) }
        let model = await sim.fullModel()
        let segments = req.tail
        if segments.isEmpty { return .json(200, SignalKDisplayUnits.enhanceTree(model, path: [])) }
        if segments == ["self"] { return .json(200, .string(sim.selfContext)) }
        if segments.count == 3, segments[0] == "vessels", segments[2] == "meta" {
            let id = segments[1] == "self" ? sim.selfID : segments[1]
            guard let vessel = model["vessels"]?[id] else { return notFound(req) }
            var all: [String: JSONValue] = [:]
            collectMeta(vessel, path: [], into: &all)
            return .json(200, .object(all.reduce(into: [:]) { $0[$1.key] = SignalKDisplayUnits.enhance($1.value, path: $1.key) }))
        }
        if let meta = await meta(segments, sim: sim) { return meta }
        var keys = segments
        if keys.count >= 2, keys[0] == "vessels", keys[1] == "self" { keys[1] = sim.selfID }
        guard let root = model.objectValue, var found = SignalKStore.get(root, keys) else { return notFound(req) }
        if keys.isEmpty || keys[0] == "vessels" {
            // Every `meta` in the answer with its `displayUnits` (`enhanceTreeMetadata`), by the
            // path below the vessel (the server's quirk: below `/` or `/vessels` the path still
            // starts with `vessels.<id>`, so only the units decide the category there).
            found = SignalKDisplayUnits.enhanceTree(found, path: keys.count >= 2 ? Array(keys.dropFirst(2)) : keys)
        }
        return .json(200, found)
    }

    /// Every `meta` below `node` by its dotted path (`collectMeta`).
    static func collectMeta(_ node: JSONValue, path: [String], into out: inout [String: JSONValue]) {
        guard let o = node.objectValue else { return }
        if let meta = o["meta"], meta.objectValue != nil { out[path.joined(separator: ".")] = meta }
        for (k, v) in o where !["value", "meta", "$source", "timestamp", "pgn", "sentence", "values"].contains(k) {
            collectMeta(v, path: path + [k], into: &out)
        }
    }

    /// `GET …/vessels/<id>/<path…>/meta` and `…/meta/<key>` (`rest.js`): the schema's metadata for
    /// the path, for any vessel id, whether or not it has data; nil (→ the tree, so 404) for a path
    /// without metadata or a key it lacks.
    static func meta(_ segments: [String], sim: SignalKSimulator) async -> SimResponse? {
        let n = segments.count
        func lookup(_ key: [String]) async -> JSONValue? {
            guard key.count >= 3, key[0] == "vessels" else { return nil }
            let context = "vessels." + (key[1] == "self" ? sim.selfID : key[1])
            return await sim.metaStore.meta(context: context, path: key.dropFirst(2).joined(separator: "."))
        }
        if n > 4, segments[n - 1] == "meta", let m = await lookup(Array(segments.dropLast())) {
            return .json(200, SignalKDisplayUnits.enhance(m, path: segments[2..<(n - 1)].joined(separator: ".")))
        }
        if n > 5, segments[n - 2] == "meta", let m = await lookup(Array(segments.dropLast(2))),
            let value = m[segments[n - 1]], value != .null, value != .bool(false), value != .string("")
        {
            return .json(200, value)
        }
        return nil
    }

    /// `PUT /signalk/v1/api/<context>/<path…>`.
    static func put(_ req: SimRequest, sim: SignalKSimulator) async -> SimResponse {
        guard req.path.hasPrefix(apiPrefix) else { return notFound(req) }
        return await SignalKPutRoute.handle(
            path: req.path, body: req.body, client: req.client, user: await SignalKSecurityRoutes.user(req, sim: sim), sim: sim)
    }
}
