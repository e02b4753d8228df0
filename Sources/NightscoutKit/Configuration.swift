import Foundation

/// A Nightscout API generation.
public enum NightscoutAPIVersion: String, Sendable, Hashable, CaseIterable {
    /// API v1 (`/api/v1`), what most clients use; accepts the API secret.
    case v1
    /// API v3 (`/api/v3`), with identifiers, soft delete and history; JWT only.
    case v3

    /// The mount path (`/api/v1`, `/api/v3`).
    public var pathPrefix: String { "/api/" + rawValue }
}

/// Where and how to reach a Nightscout site. `description` never shows credentials, URL user
/// info or query.
public struct NightscoutConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// The site's base URL (scheme, host, optional port and path prefix; no trailing slash,
    /// query or fragment).
    public let siteURL: URL
    /// The credentials.
    public var credentials: NightscoutCredentials
    /// The API to use when the credentials allow it (default v3).
    public var preferredAPI: NightscoutAPIVersion
    /// Whether to use v1 when v3 is preferred but unusable (e.g. only an API secret) or absent.
    public var allowsV1Fallback: Bool
    /// The `User-Agent` header value.
    public var userAgent: String

    /// Creates a configuration.
    /// - Throws: `NightscoutError.invalidRequest` when the URL is not http(s) with a host.
    public init(siteURL: URL, credentials: NightscoutCredentials = .none, preferredAPI: NightscoutAPIVersion = .v3,
                allowsV1Fallback: Bool = true, userAgent: String = "Lookout-NightscoutKit/\(NightscoutKit.version)") throws {
        guard var components = URLComponents(url: siteURL, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty else {
            throw NightscoutError.invalidRequest("site URL must be http(s)://host[:port][/path]")
        }
        components.scheme = scheme
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        while components.path.hasSuffix("/") { components.path.removeLast() }
        guard let url = components.url else { throw NightscoutError.invalidRequest("site URL is malformed") }
        self.siteURL = url
        self.credentials = credentials
        self.preferredAPI = preferredAPI
        self.allowsV1Fallback = allowsV1Fallback
        self.userAgent = userAgent
    }

    /// Creates a configuration from a site address text (`https://my.site` or `my.site`, which
    /// gets `https://`).
    public init(site: String, credentials: NightscoutCredentials = .none, preferredAPI: NightscoutAPIVersion = .v3,
                allowsV1Fallback: Bool = true) throws {
        let trimmed = site.trimmingCharacters(in: .whitespacesAndNewlines)
        let text = trimmed.contains("://") ? trimmed : "https://" + trimmed
        guard let url = URL(string: text) else { throw NightscoutError.invalidRequest("site URL is malformed") }
        try self.init(siteURL: url, credentials: credentials, preferredAPI: preferredAPI, allowsV1Fallback: allowsV1Fallback)
    }

    /// The API the client should use: the preferred one if the credentials allow it (v3 needs an
    /// access token or JWT), otherwise v1 if fallback is allowed; `nil` if none fits.
    public var effectiveAPI: NightscoutAPIVersion? {
        switch preferredAPI {
        case .v1: return .v1
        case .v3:
            if credentials.supportsV3 { return .v3 }
            return allowsV1Fallback ? .v1 : nil
        }
    }

    /// The URL for `path` (starting with `/`) under the site, plus an already-encoded query.
    public func url(path: String, percentEncodedQuery: String? = nil) -> URL {
        var text = siteURL.absoluteString + path
        if let q = percentEncodedQuery, !q.isEmpty { text += "?" + q }
        return URL(string: text)!
    }

    /// Site (scheme, host, port, path), API preference and credential kind; no secrets.
    public var description: String {
        "NightscoutConfiguration(site: \(siteURL.absoluteString), preferredAPI: \(preferredAPI.rawValue), "
            + "v1Fallback: \(allowsV1Fallback), credentials: \(credentials))"
    }
}
