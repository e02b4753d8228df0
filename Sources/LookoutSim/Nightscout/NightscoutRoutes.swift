import Foundation
import Hummingbird

/// Every route of the Nightscout simulator, in one place, on a Hummingbird `Router`. In front of
/// them: the request log, then injected faults, then the simulator's own 404 for what no route
/// matches (credentials are checked first there too, as the real server does).
///
/// v1 paths match as Nightscout's do: the first segment after `/api/v1` may carry a `.json`,
/// `.csv`, `.tsv` or `.txt` extension, and segments after the ones a route needs are ignored
/// (`/api/v1/entries/sgv/x` is `/api/v1/entries/sgv`), hence a `**` twin of each v1 route.
enum NightscoutRoutes {
    /// The largest request body read.
    static let bodyLimit = 60 * 1024 * 1024
    /// The extensions a v1 path's first segment may carry.
    static let v1Extensions = ["", ".json", ".csv", ".tsv", ".txt"]

    /// The simulator's router: case-insensitive, as Nightscout's (Express) is.
    static func router(_ sim: NightscoutSimulator) -> Router<SimRequestContext> {
        let router = Router(context: SimRequestContext.self, options: .caseInsensitive)
        router.add(middleware: RequestLogMiddleware(log: sim.requests, bodyLimit: bodyLimit))
        router.add(middleware: FaultMiddleware(faults: sim.faults))
        router.add(middleware: SimNotFoundMiddleware(bodyLimit: bodyLimit) { await unmatched($0, sim: sim) })
        let routes = SimRoutes(router: router, bodyLimit: bodyLimit)
        routes.get("/api/versions") { _ in versions }
        v1(routes, sim: sim, prefix: "/api/v1")
        v1(routes, sim: sim, prefix: "/api/v2")
        v2(routes, sim: sim)
        v3(routes, sim: sim)
        return router
    }

    /// `GET /api/versions`.
    static let versions = SimResponse.json(
        200,
        [
            ["version": "1.0.0", "url": "/api/v1"], ["version": "2.0.0", "url": "/api/v2"],
            ["version": "3.0.3-alpha", "url": "/api/v3"],
        ])

    /// API v1 (also served under `/api/v2`).
    static func v1(_ routes: SimRoutes, sim: NightscoutSimulator, prefix: String) {
        let v1 = V1Routes(routes: routes, sim: sim, prefix: prefix)
        v1.on("verifyauth", SimRoutes.anyMethod) { ctx in NightscoutV1.verifyAuth(ctx) }
        v1.on("status", SimRoutes.anyMethod) { ctx in await NightscoutV1.status(ctx) }
        v1.on("experiments", below: "/test", SimRoutes.anyMethod) { ctx in NightscoutV1.experimentsTest(ctx) }
        for col in ["entries", "treatments", "devicestatus", "food"] {
            v1.on(col, [.get]) { ctx in await NightscoutV1.readCollection(ctx, col: col, tail: ctx.req.tail) }
            v1.on(col, [.post, .put]) { ctx in await NightscoutV1.writeCollection(ctx, col: col, tail: ctx.req.tail) }
            v1.on(col, [.delete]) { ctx in await NightscoutV1.deleteCollection(ctx, col: col, tail: ctx.req.tail) }
        }
        for name in ["profile", "profiles"] {
            let queryForm = name == "profiles"
            v1.on(name, [.get]) { ctx in await NightscoutV1.readProfile(ctx, tail: ctx.req.tail, queryForm: queryForm) }
            v1.on(name, [.post, .put]) { ctx in await NightscoutV1.writeProfile(ctx) }
            v1.on(name, [.delete]) { ctx in await NightscoutV1.deleteProfile(ctx, tail: ctx.req.tail) }
        }
    }

    /// The v2 additions: JWTs, Loop notifications, Remote 2.0 commands.
    static func v2(_ routes: SimRoutes, sim: NightscoutSimulator) {
        routes.get("/api/v2/authorization/request/{token}") { req in
            await NightscoutV1.authorizationRequest(req, sim: sim)
        }
        for name in ["subjects", "roles"] {
            let roles = name == "roles"
            routes.on("/api/v2/authorization/\(name)", [.get, .post, .put]) { req in
                let ctx = await NightscoutV1.context(req, sim: sim)
                return roles ? await NightscoutSubjectsRoutes.roles(ctx, id: nil) : await NightscoutSubjectsRoutes.subjects(ctx, id: nil)
            }
            routes.on("/api/v2/authorization/\(name)/{id}", [.delete]) { req in
                let ctx = await NightscoutV1.context(req, sim: sim)
                let id = req.parameters["id"]
                return roles ? await NightscoutSubjectsRoutes.roles(ctx, id: id) : await NightscoutSubjectsRoutes.subjects(ctx, id: id)
            }
        }
        let v2 = V1Routes(routes: routes, sim: sim, prefix: "/api/v2")
        // Each remote-command handler notes the request it was routed (`remoteCommandRouteHits`).
        v2.exact("notifications", "/loop", [.post]) { ctx in
            await sim.remoteCommandRoutes.add(ctx.req)
            return await NightscoutV1.loopNotification(ctx)
        }
        v2.exact("remotecommands", "", [.get, .post, .delete]) { ctx in
            await sim.remoteCommandRoutes.add(ctx.req)
            return await NightscoutRemoteCommands.handle(ctx, tail: [])
        }
        v2.exact("remotecommands", "/{id}", [.put]) { ctx in
            await sim.remoteCommandRoutes.add(ctx.req)
            return await NightscoutRemoteCommands.handle(ctx, tail: [ctx.req.parameters["id"] ?? ""])
        }
    }

    /// API v3: every route but `version` checks credentials first.
    static func v3(_ routes: SimRoutes, sim: NightscoutSimulator) {
        routes.get("/api/v3/version") { req in NightscoutV3.version(req, sim: sim) }
        routes.get("/api/v3/status") { req in await NightscoutV3.status(req, sim: sim) }
        routes.get("/api/v3/lastModified") { req in await NightscoutV3.lastModified(req, sim: sim) }
        func on(_ path: String, _ methods: [HTTPRequest.Method], json: Bool = false,
                _ handler: @escaping @Sendable (NightscoutV3.Ctx) async -> SimResponse) {
            routes.on("/api/v3/{collection}" + path, methods) { req in
                switch await NightscoutV3.context(req, sim: sim) {
                case .failure(let answer): return answer
                case .success(let ctx):
                    if json, let refused = NightscoutV3.unsupportedFormat(ctx) { return refused }
                    return await handler(ctx)
                }
            }
        }
        on("", [.get], json: true) { ctx in await NightscoutV3.search(ctx) }
        on("", [.post]) { ctx in await NightscoutV3.create(ctx) }
        on("/history", [.get], json: true) { ctx in await NightscoutV3.history(ctx, since: nil) }
        on("/history/{since}", [.get], json: true) { ctx in
            await NightscoutV3.history(ctx, since: ctx.req.parameters["since"])
        }
        // `history` is also a document identifier for the other methods.
        for path in ["/{identifier}", "/history"] {
            if path != "/history" {
                on(path, [.get], json: true) { ctx in await NightscoutV3.read(ctx, id: identifier(ctx)) }
            }
            on(path, [.put]) { ctx in await NightscoutV3.update(ctx, id: identifier(ctx)) }
            on(path, [.patch]) { ctx in await NightscoutV3.patch(ctx, id: identifier(ctx)) }
            on(path, [.delete]) { ctx in await NightscoutV3.delete(ctx, id: identifier(ctx)) }
        }
    }

    /// The `{identifier}` of a v3 document route (`history` on `/api/v3/{collection}/history`).
    static func identifier(_ ctx: NightscoutV3.Ctx) -> String { ctx.req.parameters["identifier"] ?? "history" }

    /// What no route matches: `/api/v1…` and `/api/v2…` check credentials, then 404; `/api/v3…`
    /// see `NightscoutV3.unmatched`; anything else 404.
    static func unmatched(_ req: SimRequest, sim: NightscoutSimulator) async -> SimResponse {
        let s = req.segments
        guard s.count >= 2, s[0] == "api" else { return NightscoutV1.notFound }
        switch s[1] {
        case "v1", "v2": return await NightscoutV1.unmatched(req, sim: sim)
        case "v3": return await NightscoutV3.unmatched(req, sim: sim)
        default: return NightscoutV1.notFound
        }
    }
}

/// Declares v1-style routes under a prefix: the handler gets the request's credentials (`Ctx`).
struct V1Routes {
    let routes: SimRoutes
    let sim: NightscoutSimulator
    let prefix: String

    /// `<prefix>/<name>[.ext]<rest>` and any deeper path (the `**` tail is `Ctx.req.tail`).
    func on(_ name: String, below rest: String = "", _ methods: [HTTPRequest.Method],
            _ handler: @escaping @Sendable (NightscoutV1.Ctx) async -> SimResponse) {
        exact(name, rest, methods, handler)
        exact(name, rest + "/**", methods, handler)
    }

    /// `<prefix>/<name>[.ext]<rest>` only.
    func exact(_ name: String, _ rest: String, _ methods: [HTTPRequest.Method],
               _ handler: @escaping @Sendable (NightscoutV1.Ctx) async -> SimResponse) {
        let sim = self.sim
        for ext in NightscoutRoutes.v1Extensions {
            routes.on("\(prefix)/\(name)\(ext)\(rest)", methods) { req in
                await handler(await NightscoutV1.context(req, sim: sim))
            }
        }
    }
}
