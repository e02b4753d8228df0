import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// The one HTTP transport of the Kits: AsyncHTTPClient with a connect timeout, a request timeout
/// covering the whole exchange (head and body), a body size limit, redirects followed by
/// ``RedirectPolicy`` only, a refused connection failing at once, and errors
/// (``WireHTTPError``) that never carry a secret.
public struct WireHTTPClient: Sendable {
    /// The connect timeout of ``shared``: a host that does not answer fails after this long,
    /// whatever the request's own timeout.
    public static let defaultConnectTimeout: Duration = .seconds(5)

    /// The process's client: ``defaultConnectTimeout``, follows no redirect itself, does not retry
    /// a refused connection. Like `HTTPClient.shared`, it lives as long as the process and is never
    /// shut down.
    public static let shared = WireHTTPClient(client: makeClient(connectTimeout: defaultConnectTimeout))

    /// Debug lines for each exchange (`lookout -v`): method, URL without secrets, status or
    /// failure, and time taken; never a header or a body.
    static let log = Logger(label: "lookout.http")

    /// The AsyncHTTPClient under it (it must not follow redirects itself).
    public let client: HTTPClient

    /// A transport over `client`, which must not follow redirects (see ``makeClient(connectTimeout:)``).
    public init(client: HTTPClient) { self.client = client }

    /// A new AsyncHTTPClient configured as ``shared`` is, with `connectTimeout`; the caller owns
    /// it (and shuts it down, or keeps it for the process's life).
    public static func makeClient(connectTimeout: Duration) -> HTTPClient {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.redirectConfiguration = .disallow
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .nanoseconds(Int64(connectTimeout.components.seconds) * 1_000_000_000
            + connectTimeout.components.attoseconds / 1_000_000_000)
        return HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration,
            backgroundActivityLogger: Logger(label: "lookout.wire.http", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    /// Sends `request`, following redirects as `redirects` allows, and reads the whole body (at
    /// most `maximumBodyBytes`), all within `timeout`.
    /// - Throws: ``WireHTTPError`` for every failure; `CancellationError` when the task is cancelled.
    public func send(_ request: WireHTTPRequest, timeout: Duration, maximumBodyBytes: Int,
                     redirects: RedirectPolicy = .sameOrigin) async throws -> WireHTTPResponse {
        let started = ContinuousClock.now
        func elapsed() -> String {
            let d = ContinuousClock.now - started
            return "\(d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000) ms"
        }
        do {
            let response = try await exchangeWithin(request, timeout: timeout, maximumBodyBytes: maximumBodyBytes, redirects: redirects)
            Self.log.debug("\(request.method) \(Redaction.url(request.url)) → \(response.status) in \(elapsed())")
            return response
        } catch let error as WireHTTPError {
            Self.log.debug("\(request.method) \(Redaction.url(request.url)) failed after \(elapsed()): \(error.reason)")
            throw error
        }
    }

    /// ``send(_:timeout:maximumBodyBytes:redirects:)`` without the log line.
    private func exchangeWithin(_ request: WireHTTPRequest, timeout: Duration, maximumBodyBytes: Int,
                                redirects: RedirectPolicy) async throws -> WireHTTPResponse {
        try await withThrowingTaskGroup(of: WireHTTPResponse.self) { group in
            group.addTask { try await exchange(request, timeout: timeout, maximumBodyBytes: maximumBodyBytes, redirects: redirects) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw WireHTTPError(.timedOut, request)
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw CancellationError() }
            return first
        }
    }

    /// The exchange and its redirects, without the overall timeout.
    private func exchange(_ request: WireHTTPRequest, timeout: Duration, maximumBodyBytes: Int,
                          redirects: RedirectPolicy) async throws -> WireHTTPResponse {
        let deadline = NIODeadline.now() + .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000
            + timeout.components.attoseconds / 1_000_000_000)
        var current = request
        var followed = 0
        while true {
            let response = try await once(current, deadline: deadline, maximumBodyBytes: maximumBodyBytes)
            guard case .sameOrigin(let limit) = redirects, let next = try Self.redirect(from: current, response) else {
                return response
            }
            followed += 1
            guard followed <= limit else { throw WireHTTPError(.tooManyRedirects(limit: limit), request) }
            current = next
        }
    }

    /// The request to send after `response`, if it is a redirect within the origin of `request`.
    /// - Throws: ``WireHTTPError/Kind/crossOriginRedirect(targetOrigin:)`` for another origin.
    static func redirect(from request: WireHTTPRequest, _ response: WireHTTPResponse) throws -> WireHTTPRequest? {
        guard [301, 302, 303, 307, 308].contains(response.status), let location = response.header("location"),
              let target = URL(string: location, relativeTo: request.url)?.absoluteURL else { return nil }
        guard HTTPOrigin.same(request.url, target) else {
            throw WireHTTPError(.crossOriginRedirect(targetOrigin: HTTPOrigin.of(target)), request)
        }
        var next = request
        next.url = target
        if response.status == 303 || (response.status == 301 || response.status == 302) && request.method == "POST" {
            next.method = "GET"
            next.body = nil
            next.headers.removeAll { ["content-type", "content-length"].contains($0.name.lowercased()) }
        }
        return next
    }

    /// One exchange, redirects not followed.
    private func once(_ request: WireHTTPRequest, deadline: NIODeadline, maximumBodyBytes: Int) async throws -> WireHTTPResponse {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = .init(rawValue: request.method)
        for h in request.headers { outgoing.headers.add(name: h.name, value: h.value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        do {
            let response = try await client.execute(outgoing, deadline: deadline)
            if let declared = response.headers.first(name: "content-length").flatMap(Int.init), declared > maximumBodyBytes {
                throw WireHTTPError(.bodyTooLarge(limit: maximumBodyBytes), request)
            }
            let buffer: ByteBuffer
            do {
                buffer = try await response.body.collect(upTo: maximumBodyBytes)
            } catch is NIOTooManyBytesError {
                throw WireHTTPError(.bodyTooLarge(limit: maximumBodyBytes), request)
            }
            return WireHTTPResponse(status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
                                    body: Data(buffer.readableBytesView))
        } catch let error as WireHTTPError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw WireHTTPError(WireHTTPError.kind(of: error, url: request.url), request)
        }
    }
}
