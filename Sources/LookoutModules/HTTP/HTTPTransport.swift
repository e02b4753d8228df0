import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NightscoutKit
import LookoutWire
import Lua

/// Sends the `http` module's prepared requests over LookoutWire's process-wide client
/// (`WireHTTPClient.shared.client`, the one every Kit uses):
/// - the client follows no redirect itself: ``exchange(_:)`` follows at most 5 (`follow_redirects = true`),
///   as AsyncHTTPClient would (303, and 301/302 after POST, become GET; a loop is an error), drops
///   every header but those ``CrossOriginHeaders`` keeps on a change of origin (so no credential
///   a script put in a header of its own follows), and checks every hop, so a
///   redirect cannot reach a remote-command endpoint (``RemoteCommandEndpoints``) either;
/// - a refused connection fails at once instead of being retried until the connect timeout,
///   so scripts get `network` (retryable) rather than a late `timeout`.
public enum HTTPTransport {
    /// The client: LookoutWire's, shared with every Kit (connect timeout, no redirect followed by
    /// the client itself, a refused connection not retried). The redirects the `http` module
    /// follows are walked here, hop by hop, with the remote-command check on each.
    static var direct: HTTPClient { WireHTTPClient.shared.client }

    /// Sends `request` and reads the whole answer, within `request.timeout` for everything
    /// (AsyncHTTPClient's deadline covers only the response head, so the body read is raced
    /// against the same timeout here).
    /// - Throws: an `HTTPFailure` (or `CancellationError` mapped to one) for every failure.
    /// - Parameter budget: the script's host memory budget: the body read counts against it.
    public static func perform(_ request: HTTPPreparedRequest, budget: LuaHostBytes = LuaHostBytes(limit: 0))
        async throws(HTTPFailure) -> HTTPResult
    {
        do {
            return try await withThrowingTaskGroup(of: HTTPResult.self) { group in
                group.addTask { try await exchange(request, budget: budget) }
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

    /// One exchange without the overall timeout, following redirects if asked.
    private static func exchange(_ request: HTTPPreparedRequest, budget: LuaHostBytes) async throws -> HTTPResult {
        let deadline = NIODeadline.now() + .nanoseconds(Int64(nanoseconds(request.timeout)))
        var current = request
        var visited: Set<String> = [request.url]
        while true {
            try StatusPortGuard.check(current.url, method: current.method)
            var outgoing = HTTPClientRequest(url: current.url)
            outgoing.method = HTTPMethod(rawValue: current.method)
            for (name, value) in current.headers { outgoing.headers.add(name: name, value: value) }
            if let body = current.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
            let response = try await direct.execute(outgoing, deadline: deadline)
            guard request.followRedirects, let next = try redirect(from: current, response) else {
                return try await read(response, request, budget: budget)
            }
            guard visited.count <= HTTPRequestSpec.maxRedirects else { throw HTTPClientError.redirectLimitReached }
            guard visited.insert(next.url).inserted else { throw HTTPClientError.redirectCycleDetected }
            for try await _ in response.body {}  // let the connection go back to the pool
            current = next
        }
    }

    /// The request a 3xx `response` leads to, or `nil` when it is not a redirect to follow
    /// (no or unusable `location`, a scheme other than http/https: the answer is returned as is).
    /// - Throws: `refused` when the target is a remote-command endpoint.
    static func redirect(from request: HTTPPreparedRequest, _ response: HTTPClientResponse) throws(HTTPFailure)
        -> HTTPPreparedRequest?
    {
        let status = response.status.code
        guard [301, 302, 303, 307, 308].contains(status), let location = response.headers.first(name: "location"),
              let base = URL(string: request.url), let target = URL(string: location, relativeTo: base)?.absoluteURL,
              let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https", target.host != nil
        else { return nil }
        var next = request
        next.url = target.absoluteString
        guard !RemoteCommandEndpoints.matches(url: next.url) else { throw HTTPFailure.remoteCommand(next.method, next.url) }
        if (status == 303 && request.method != "HEAD") || ((status == 301 || status == 302) && request.method == "POST") {
            next.method = "GET"
            next.body = nil
            next.headers.removeAll { ["content-length", "content-type"].contains($0.name.lowercased()) }
        }
        if !HTTPOrigin.same(base, target) { next.headers = CrossOriginHeaders.filtered(next.headers) }
        return next
    }

    /// The whole answer, within `request.maxSize` and the script's host memory `budget` (each
    /// chunk is counted before it is kept).
    private static func read(_ response: HTTPClientResponse, _ request: HTTPPreparedRequest, budget: LuaHostBytes)
        async throws -> HTTPResult
    {
        if let declared = response.headers.first(name: "content-length").flatMap(Int.init), declared > request.maxSize {
            throw HTTPFailure.tooLarge(request)
        }
        guard let hold = budget.reserve(0) else { throw HTTPFailure.memory(request, what: "response body", limit: budget.limit) }
        var body: [UInt8] = []
        for try await chunk in response.body {
            guard body.count + chunk.readableBytes <= request.maxSize else { throw HTTPFailure.tooLarge(request) }
            guard hold.grow(by: chunk.readableBytes) else {
                throw HTTPFailure.memory(request, what: "response body", limit: budget.limit)
            }
            body += chunk.readableBytesView
        }
        let headers = response.headers.map { (name: $0.name, value: $0.value) }
        return HTTPResult(status: Int(response.status.code), headers: headers, body: body, hold: hold)
    }
}
