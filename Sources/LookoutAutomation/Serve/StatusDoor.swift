import Foundation
import HTTPTypes
import Hummingbird
import LookoutConfig

/// Whom the status server acts for, checked before any route (every page added later inherits it):
/// - every request's `Host` must name the server: a loopback name (`localhost`, `127.0.0.1`,
///   `[::1]`) or one of `[serve] hosts` (and the host of `[serve] public_url`); anything else, a
///   DNS-rebinding name included, gets 421 Misdirected Request;
/// - a request that may change state (any method but GET, HEAD, OPTIONS) from another site gets
///   403: an `Origin` other than the server's own (the `Host` it was sent to, or `[serve]
///   public_url`), `Origin: null`, or `Sec-Fetch-Site` other than `same-origin`/`none`.
/// Requests without `Origin` (curl, a phone app's action) pass the second rule; what they may do is
/// up to the route (an ack needs the link's token).
public struct StatusDoor: Sendable {
    /// Names accepted besides loopback, normalised (`HostConfig.normalizedHostName`).
    public let hosts: Set<String>
    /// The origin of `[serve] public_url` (`https://name[:port]`), if set.
    public let publicOrigin: StatusOrigin?

    /// A door for loopback names plus `hosts`, and `publicURL`'s origin.
    public init(hosts: [String] = [], publicURL: String? = nil) {
        self.hosts = Set(hosts.map(HostConfig.normalizedHostName))
        self.publicOrigin = publicURL.flatMap(StatusOrigin.init(url:))
    }

    /// The door `[serve]` of `config` describes.
    public init(config: HostConfig) {
        self.init(hosts: config.serveHosts, publicURL: config.servePublicURL)
    }

    /// Whether `name` (a host without port) names this server.
    public func accepts(host name: String) -> Bool {
        let normalized = HostConfig.normalizedHostName(name)
        return HostConfig.loopbackHostNames.contains(normalized) || hosts.contains(normalized)
    }

    /// The refusal for a request, or nil when it may go on to the routes.
    /// - Parameters:
    ///   - hosts: every `Host` the request carries (the authority and any repeated header).
    func refusal(method: String, hosts requestHosts: [String], origin: String?, fetchSite: String?) -> StatusResponse? {
        guard let first = requestHosts.first else {
            return .text("misdirected request: a Host header naming this server is required", status: 421)
        }
        for host in requestHosts {
            guard let authority = StatusAuthority(host), accepts(host: authority.host) else {
                return .text("misdirected request: this server answers to localhost, 127.0.0.1 and [::1]"
                    + (hosts.isEmpty ? "" : " and the names in [serve] hosts") + ", not to this Host", status: 421)
            }
        }
        guard !["GET", "HEAD", "OPTIONS"].contains(method) else { return nil }
        if let fetchSite = fetchSite?.lowercased(), fetchSite != "same-origin", fetchSite != "none" {
            return .text("forbidden: a \(fetchSite == "cross-site" ? "cross-site" : "cross-origin") request cannot change anything here",
                         status: 403)
        }
        if let origin {
            guard let parsed = StatusOrigin(url: origin), let target = StatusAuthority(first),
                  parsed == publicOrigin || parsed.matches(target)
            else {
                return .text("forbidden: a request from another origin cannot change anything here", status: 403)
            }
        }
        return nil
    }
}

/// `host[:port]` of a `Host` header (IPv6 in brackets).
struct StatusAuthority: Equatable {
    var host: String
    var port: Int?

    init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else { return nil }
            host = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
            let rest = trimmed[trimmed.index(after: close)...]
            if rest.isEmpty { port = nil } else {
                guard rest.hasPrefix(":"), let number = Int(rest.dropFirst()) else { return nil }
                port = number
            }
        } else {
            let parts = trimmed.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2, let name = parts.first, !name.isEmpty else { return nil }
            host = String(name)
            if parts.count == 2 {
                guard let number = Int(parts[1]) else { return nil }
                port = number
            }
        }
        host = HostConfig.normalizedHostName(host)
    }
}

/// An origin: scheme, host and port (the scheme's default when not written).
public struct StatusOrigin: Equatable, Sendable {
    var scheme: String
    var host: String
    var port: Int

    /// The origin of an http or https URL (`Origin` header or `[serve] public_url`).
    init?(url: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = HostConfig.normalizedHostName(host)
        self.port = components.port ?? (scheme == "https" ? 443 : 80)
    }

    /// Whether this origin is the `Host` a request was sent to (same name and port).
    func matches(_ authority: StatusAuthority) -> Bool {
        host == authority.host && port == (authority.port ?? (scheme == "https" ? 443 : 80))
    }
}

/// The door as the status router's first middleware (see `StatusDoor`); it also marks every answer
/// as not to be cached, framed or referred to other sites (ack pages carry a token in their URL).
/// The referrer policy is `same-origin`, not `no-referrer`: under `no-referrer` a browser sends
/// `Origin: null` with a page's own form posts, which the door refuses (the ack page's button and
/// the web view's forms would never work in Chromium).
struct StatusDoorMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let door: StatusDoor

    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var hosts = request.head.authority.map { [$0] } ?? []
        hosts += request.headers[values: HTTPField.Name("Host")!]
        if let refusal = door.refusal(method: request.method.rawValue, hosts: hosts, origin: request.headers[.origin],
                                      fetchSite: request.headers[Self.secFetchSite]) {
            return Self.protected(StatusRoutes.convert(refusal))
        }
        return Self.protected(try await next(request, context))
    }

    static func protected(_ response: Response) -> Response {
        var response = response
        response.headers[.cacheControl] = "no-store"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        return response
    }
}
