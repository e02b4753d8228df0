import Foundation
import Hummingbird

/// A route handler of a simulator: the collected request in, the response out.
typealias SimHandler = @Sendable (SimRequest) async -> SimResponse

/// Declares a simulator's routes on a Hummingbird `Router`; each handler gets a `SimRequest`
/// (body collected up to `bodyLimit`, route parameters and `**` tail percent-decoded).
struct SimRoutes {
    /// Every method the simulators answer on a route that takes "any method".
    static let anyMethod: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options]

    let router: Router<SimRequestContext>
    let bodyLimit: Int

    /// Answers `methods` on `path` with `handler`.
    func on(_ path: String, _ methods: [HTTPRequest.Method], _ handler: @escaping SimHandler) {
        let limit = bodyLimit
        for method in methods {
            router.on(RouterPath(path), method: method) { request, context -> SimResponse in
                let req = try await SimRequest.collect(request, context: context, limit: limit)
                return await handler(req)
            }
        }
    }

    /// Answers `GET` on `path`.
    func get(_ path: String, _ handler: @escaping SimHandler) { on(path, [.get], handler) }
}

/// What a simulator answers when no route matches the path and method (Hummingbird's router would
/// answer an empty 404): the simulator's own not-found answer, which may check credentials first
/// as the real server does. Add it after the other middleware so that they see this answer too.
struct SimNotFoundMiddleware: RouterMiddleware {
    typealias Context = SimRequestContext
    let bodyLimit: Int
    let handler: SimHandler

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let req = try await SimRequest.collect(request, context: context, limit: bodyLimit)
            return await handler(req).httpResponse
        }
    }
}

extension SimRequest {
    /// Reads a Hummingbird request (body up to `limit` bytes) into a `SimRequest`.
    static func collect(_ request: Request, context: SimRequestContext, limit: Int) async throws -> SimRequest {
        var request = request
        let body = try await request.collectBody(upTo: limit)
        var headers: [String: String] = [:]
        for f in request.headers { headers[f.name.canonicalName.lowercased()] = f.value }
        // HTTP/1.1 `Host` arrives as the request's authority.
        if let authority = request.head.authority { headers["host"] = authority }
        let path = request.uri.path
        var parameters: [String: String] = [:]
        for (name, value) in context.parameters where name != Parameters.recursiveCaptureKey {
            parameters[String(name)] = decode(value)
        }
        return SimRequest(
            method: request.method.rawValue, path: path, segments: segments(path),
            query: SimRequest.parseQuery(request.uri.query), headers: headers, body: Data(buffer: body),
            client: context.client, parameters: parameters,
            tail: context.parameters.getCatchAll().flatMap { segments(String($0)) })
    }

    /// `path` split on `/`, percent-decoded, empty segments removed.
    static func segments(_ path: String) -> [String] { path.split(separator: "/").map(decode) }

    private static func decode(_ s: Substring) -> String { String(s).removingPercentEncoding ?? String(s) }
}
