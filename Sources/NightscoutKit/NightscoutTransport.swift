import Foundation
import LookoutWire

/// Sends `NightscoutRequest`s and returns raw `NightscoutHTTPResponse`s (any status). The
/// default implementation uses AsyncHTTPClient; tests may inject their own function.
public struct NightscoutTransport: Sendable {
    /// Performs one request with a timeout in seconds.
    public typealias Send = @Sendable (_ request: NightscoutRequest, _ timeout: TimeInterval) async throws
        -> NightscoutHTTPResponse

    /// The send function.
    public let send: Send

    /// Wraps a send function.
    public init(send: @escaping Send) { self.send = send }

    /// Most same-origin redirects followed for one request.
    public static let maximumRedirects = 5

    /// A transport over LookoutWire's ``WireHTTPClient`` (`client`, the process's by default) that
    /// reads at most `maximumBodyBytes` of each response body. Failures become
    /// `NightscoutError.transport` (whose text names the failure kind and the URL path, never
    /// headers or credentials; a refused connection names the site's origin and fails at once).
    ///
    /// Redirects are followed only within the site's origin (scheme, host and port), at most
    /// ``maximumRedirects``; a redirect to another origin fails without a request to it, so the
    /// credentials (`api-secret`, `Authorization`, a token in the path) never go anywhere else.
    public static func asyncHTTPClient(_ client: WireHTTPClient = .shared, maximumBodyBytes: Int = 16 * 1024 * 1024)
        -> NightscoutTransport
    {
        NightscoutTransport { request, timeout in
            let wire = WireHTTPRequest(method: request.method, url: request.url,
                                       headers: request.headers.map { ($0.name, $0.value) }, body: request.body)
            let response: WireHTTPResponse
            do {
                response = try await client.send(wire, timeout: .milliseconds(Int64((timeout * 1000).rounded())),
                                                 maximumBodyBytes: maximumBodyBytes, redirects: .sameOrigin(limit: maximumRedirects))
            } catch let error as WireHTTPError {
                throw NightscoutError.transport(message(error))
            }
            var headers: [String: String] = [:]
            for h in response.headers where headers[h.name] == nil { headers[h.name] = h.value }
            return NightscoutHTTPResponse(status: response.status, headers: headers, body: response.body)
        }
    }

    /// `transport` with `secrets` set as every response's ``NightscoutHTTPResponse/redactions``
    /// (and removed from a failure's text): what a hostile site echoes of the credentials never
    /// reaches an error. `transport` itself when there is nothing to remove.
    public static func redacting(_ transport: NightscoutTransport, _ secrets: [String]) -> NightscoutTransport {
        guard !secrets.isEmpty else { return transport }
        return NightscoutTransport { request, timeout in
            do {
                var response = try await transport.send(request, timeout)
                response.redactions = secrets
                return response
            } catch NightscoutError.transport(let text) {
                throw NightscoutError.transport(Redaction.text(text, secrets: secrets))
            }
        }
    }

    /// The text of a transport failure (`METHOD /path: reason`).
    static func message(_ error: WireHTTPError) -> String {
        guard case .crossOriginRedirect(let target) = error.kind else { return error.description }
        return "\(error.method) \(error.path): the site redirects to another origin (\(target)); credentials go only to "
            + "the configured site, so the redirect was not followed: set the site's url to where it redirects"
    }
}
