import Foundation
import LookoutWire
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import LookoutConfig
import LookoutModules
import NIOCore
import NIOSSL

/// A request to the status server, as an extra route sees it.
public struct StatusRequest: Sendable {
    /// `GET`, `POST`, …
    public var method: String
    /// The path, e.g. `/ack/urgent-low`.
    public var path: String
    /// The query string without `?`, if any.
    public var query: String?
    /// Header fields, names in lower case.
    public var headers: [String: String]
    /// The body (at most 1 MiB).
    public var body: Data
}

/// What a route answers.
public struct StatusResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The content type.
    public var contentType: String
    /// The body.
    public var body: Data
    /// More header fields (`Set-Cookie`, `Location`, `Content-Security-Policy`…), by name.
    public var headers: [String: String] = [:]
    /// A body sent piece by piece after `body` for as long as the stream lasts (server-sent
    /// events); nil for an ordinary response.
    public var stream: (@Sendable () -> AsyncStream<String>)?

    /// Creates a response.
    public init(status: Int, contentType: String, body: Data, headers: [String: String] = [:],
                stream: (@Sendable () -> AsyncStream<String>)? = nil) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
        self.stream = stream
    }

    /// A JSON response from a JSON-encodable value (`{"error": …}` if it cannot be encoded).
    public static func json(_ value: some Encodable, status: Int = 200) -> StatusResponse {
        let data = (try? HealthDocument.encoder.encode(value)) ?? Data(#"{"error":"cannot encode"}"#.utf8)
        return StatusResponse(status: status, contentType: "application/json", body: data)
    }

    /// A plain-text response.
    public static func text(_ text: String, status: Int = 200) -> StatusResponse {
        StatusResponse(status: status, contentType: "text/plain; charset=utf-8", body: Data((text + "\n").utf8))
    }
}

/// A route besides `GET /status`: requests whose method matches and whose path starts with
/// `pathPrefix` go to `handler` (the longest matching prefix wins). For example the alert
/// acknowledgement callback: `StatusRoute(method: "POST", pathPrefix: "/ack/") { … }`.
public struct StatusRoute: Sendable {
    /// The HTTP method, upper case.
    public var method: String
    /// The start of the paths it answers.
    public var pathPrefix: String
    /// Answers a request.
    public var handler: @Sendable (StatusRequest) async -> StatusResponse

    /// Creates a route.
    public init(method: String, pathPrefix: String, handler: @escaping @Sendable (StatusRequest) async -> StatusResponse) {
        self.method = method.uppercased()
        self.pathPrefix = pathPrefix
        self.handler = handler
    }
}

/// The loopback HTTP server of `serve`: `GET /status` answers the health registry as JSON
/// (`HealthDocument`), plus any extra routes. It listens on 127.0.0.1 only, and answers only
/// requests that pass its `StatusDoor` (Host, Origin).
public final class StatusServer: Sendable {
    /// Errors from `start`.
    public struct StartError: Error, CustomStringConvertible, Sendable {
        /// What went wrong.
        public let description: String
    }

    private let health: HealthRegistry
    private let info: @Sendable () -> [String: String]
    private let routes: [StatusRoute]
    private let door: StatusDoor
    private let statusDocument: Bool
    private let task = Locked<Task<Void, any Error>?>(nil)
    private let boundPort = Locked<Int?>(nil)

    /// - Parameters:
    ///   - info: extra fields of the document's `info` (pid, start time…), read per request.
    ///   - extraRoutes: routes besides `GET /status`.
    ///   - door: whom it answers (`Host`) and acts for (`Origin`), checked before any route.
    ///   - statusDocument: whether it answers `GET /status` (the web view's own listener does not).
    public init(health: HealthRegistry, info: @escaping @Sendable () -> [String: String] = { [:] },
                extraRoutes: [StatusRoute] = [], door: StatusDoor = StatusDoor(), statusDocument: Bool = true) {
        self.health = health
        self.info = info
        self.routes = extraRoutes
        self.door = door
        self.statusDocument = statusDocument
    }

    /// A certificate chain and private key (PEM files) for https.
    public struct TLSFiles: Sendable {
        /// The certificate chain's path.
        public var certificate: String
        /// The private key's path.
        public var key: String

        /// Creates the pair.
        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }

        /// The server's TLS configuration; throws a `StartError` naming the file that cannot be used.
        func configuration() throws -> TLSConfiguration {
            let chain: [NIOSSLCertificate], key: NIOSSLPrivateKey
            do { chain = try NIOSSLCertificate.fromPEMFile(certificate) } catch {
                throw StartError(description: "tls_cert \(certificate): not a readable PEM certificate chain (\(error))")
            }
            do { key = try NIOSSLPrivateKey(file: self.key, format: .pem) } catch {
                throw StartError(description: "tls_key \(self.key): not a readable PEM private key (\(error))")
            }
            guard !chain.isEmpty else { throw StartError(description: "tls_cert \(certificate): no certificate in the file") }
            return TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        }
    }

    /// Starts listening on `address`:`port` (127.0.0.1 unless told; port 0: any free port), with
    /// https when `tls` is given; returns the port.
    public func start(port: Int, address: String = "127.0.0.1", tls: TLSFiles? = nil) async throws -> Int {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "lookout.status")
        logger.logLevel = .critical
        let server: HTTPServerBuilder = try tls.map { try .tls(.http1(), tlsConfiguration: try $0.configuration()) } ?? .http1()
        let app = Application(
            responder: StatusRoutes.router(health: health, info: info, routes: routes, door: door, statusDocument: statusDocument)
                .buildResponder(),
            server: server,
            configuration: .init(address: .hostname(address, port: port), serverName: nil),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: logger)
        let running = Task {
            defer { continuation.finish() }
            try await app.run()
        }
        task.withLock { $0 = running }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next(), bound > 0 else {
            let reason: String
            do { try await running.value; reason = "the server stopped" } catch { reason = "\(error)" }
            throw StartError(description: "cannot listen on \(address):\(port): \(reason)")
        }
        boundPort.withLock { $0 = bound }
        ServeStatusAddress.add(port: bound)  // scripts' `http` requests may not reach it
        return bound
    }

    /// Stops the server.
    public func stop() async {
        guard let running = task.withLock({ task -> Task<Void, any Error>? in defer { task = nil }; return task }) else { return }
        if let bound = boundPort.withLock({ port -> Int? in defer { port = nil }; return port }) { ServeStatusAddress.remove(port: bound) }
        running.cancel()
        _ = try? await running.value
    }
}

/// The status server's routes on a Hummingbird `Router`: `GET`/`HEAD /status`, then each extra
/// route under its path prefix (a prefix ending in `/` is whole segments, `/ack/` → `/ack` and
/// `/ack/**`; otherwise its last segment is a wildcard, `/ack` → `/ack*` and `/ack*/**`; the
/// handler checks the exact prefix). The Router picks the most specific route; where that one's
/// prefix does not match (`/ack/urgent` with routes `/ack/` and `/ack/urgent/`), the longest
/// matching prefix wins, as before. What no route answers gets a plain-text 404, or 405 on `/status`.
enum StatusRoutes {
    static func router(health: HealthRegistry, info: @escaping @Sendable () -> [String: String], routes: [StatusRoute],
                       door: StatusDoor = StatusDoor(), statusDocument: Bool = true) -> Router<BasicRequestContext>
    {
        let router = Router()
        // First: the door wraps every route added below and the not-found answers.
        router.add(middleware: StatusDoorMiddleware(door: door))
        router.add(middleware: StatusNotFoundMiddleware(routes: routes, statusDocument: statusDocument))
        for method in [HTTPRequest.Method.get, .head] where statusDocument {
            router.on("/status", method: method) { _, _ in
                convert(StatusResponse(status: 200, contentType: "application/json", body: health.json(now: Date(), extra: info())))
            }
        }
        for route in routes {
            guard let method = HTTPRequest.Method(route.method) else { continue }
            for path in routerPaths(prefix: route.pathPrefix) {
                router.on(RouterPath(path), method: method) { request, _ in try await answer(request, route: route) }
            }
        }
        return router
    }

    /// The router paths that cover every path starting with `prefix`.
    static func routerPaths(prefix: String) -> [String] {
        var segments = prefix.split(separator: "/").map(String.init)
        if prefix.hasSuffix("/") || segments.isEmpty {
            return ["/" + segments.joined(separator: "/"), "/" + (segments + ["**"]).joined(separator: "/")]
        }
        segments[segments.count - 1] += "*"
        return ["/" + segments.joined(separator: "/"), "/" + (segments + ["**"]).joined(separator: "/")]
    }

    /// The extra route for a request by the longest matching prefix, if any.
    static func longestMatch(_ request: Request, routes: [StatusRoute]) -> StatusRoute? {
        let path = request.uri.path, method = request.method.rawValue
        guard !isStatus(path) else { return nil }
        return routes.filter { $0.method == method && path.hasPrefix($0.pathPrefix) }
            .max(by: { $0.pathPrefix.count < $1.pathPrefix.count })
    }

    /// Runs an extra route: its exact prefix (else the not-found middleware takes over), then the
    /// body (at most 1 MiB).
    static func answer(_ request: Request, route: StatusRoute) async throws -> Response {
        var request = request
        let path = request.uri.path
        guard path.hasPrefix(route.pathPrefix), !isStatus(path) else { throw HTTPError(.notFound) }
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: 1 << 20)
        } catch {
            return convert(.text("request body too large (limit 1 MiB)", status: 413))
        }
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName.lowercased()] = field.value }
        let statusRequest = StatusRequest(
            method: request.method.rawValue, path: path, query: request.uri.query, headers: headers, body: Data(buffer: body))
        return convert(await route.handler(statusRequest))
    }

    /// Whether `path` is the status document's.
    static func isStatus(_ path: String) -> Bool { path == "/status" || path == "/status/" }

    static func convert(_ response: StatusResponse) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = response.contentType
        for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) {
            if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
        }
        guard let stream = response.stream else {
            return Response(
                status: HTTPResponse.Status(code: response.status), headers: fields,
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: response.body)))
        }
        let first = response.body
        return Response(
            status: HTTPResponse.Status(code: response.status), headers: fields,
            body: ResponseBody { writer in
                if !first.isEmpty { try await writer.write(ByteBuffer(bytes: first)) }
                for await piece in stream() { try await writer.write(ByteBuffer(string: piece)) }
                try await writer.finish(nil)
            })
    }
}

/// The status server's answer when no route matches: 405 on `/status`, the extra route with the
/// longest matching prefix, else a plain-text 404.
struct StatusNotFoundMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let routes: [StatusRoute]
    /// Whether the server answers `GET /status` (else `/status` is not found like any other path).
    var statusDocument = true

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let path = request.uri.path
            if statusDocument, StatusRoutes.isStatus(path) { return StatusRoutes.convert(.text("use GET /status", status: 405)) }
            if let route = StatusRoutes.longestMatch(request, routes: routes) {
                return try await StatusRoutes.answer(request, route: route)
            }
            return StatusRoutes.convert(.text("not found: \(request.method.rawValue) \(path)"
                + (statusDocument ? " (try GET /status)" : " (the web view is at /web/)"), status: 404))
        }
    }
}
