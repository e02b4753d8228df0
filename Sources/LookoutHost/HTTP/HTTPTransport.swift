import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1

/// Sends prepared requests with AsyncHTTPClient.
///
/// Two process-wide clients, configured like `HTTPClient.shared` (same TLS, pool and
/// decompression settings) except that:
/// - redirects are at most 5 (`follow_redirects = true`) or not followed at all; the shared
///   client follows up to 20 and cannot turn that off per request;
/// - a refused connection fails at once instead of being retried until the connect timeout,
///   so scripts get `network` (retryable) rather than a late `timeout`.
/// Like `HTTPClient.shared`, they live as long as the process and are never shut down.
enum HTTPTransport {
    /// The client that follows redirects.
    static let following = makeClient(redirects: .follow(max: HTTPRequestSpec.maxRedirects, allowCycles: false))
    /// The client that returns 3xx answers as they are.
    static let direct = makeClient(redirects: .disallow)

    private static func makeClient(redirects: HTTPClient.Configuration.RedirectConfiguration) -> HTTPClient {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.redirectConfiguration = redirects
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration,
            backgroundActivityLogger: Logger(label: "lookout.http", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    /// Sends `request` and reads the whole answer, within `request.timeout` for everything
    /// (AsyncHTTPClient's deadline covers only the response head, so the body read is raced
    /// against the same timeout here).
    /// - Throws: an `HTTPFailure` (or `CancellationError` mapped to one) for every failure.
    static func perform(_ request: HTTPPreparedRequest) async throws(HTTPFailure) -> HTTPResult {
        do {
            return try await withThrowingTaskGroup(of: HTTPResult.self) { group in
                group.addTask { try await exchange(request) }
                group.addTask {
                    try await Task.sleep(nanoseconds: nanoseconds(request.timeout))
                    throw HTTPFailure.timeout(request)
                }
                defer { group.cancelAll() }
                guard let first = try await group.next() else { throw CancellationError() }
                return first
            }
        } catch {
            throw HTTPFailure.map(error, request)
        }
    }

    /// Nanoseconds of a timeout, capped at about three years (no overflow).
    private static func nanoseconds(_ seconds: Double) -> UInt64 {
        UInt64(min(max(seconds, 0), 1e8) * 1e9)
    }

    /// One exchange without the overall timeout.
    private static func exchange(_ request: HTTPPreparedRequest) async throws -> HTTPResult {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let client = request.followRedirects ? following : direct
        let deadline = NIODeadline.now() + .nanoseconds(Int64(nanoseconds(request.timeout)))
        let response = try await client.execute(outgoing, deadline: deadline)

        if let declared = response.headers.first(name: "content-length").flatMap(Int.init), declared > request.maxSize {
            throw HTTPFailure.tooLarge(request)
        }
        var body: [UInt8] = []
        for try await chunk in response.body {
            guard body.count + chunk.readableBytes <= request.maxSize else { throw HTTPFailure.tooLarge(request) }
            body += chunk.readableBytesView
        }
        let headers = response.headers.map { (name: $0.name, value: $0.value) }
        return HTTPResult(status: Int(response.status.code), headers: headers, body: body)
    }
}
