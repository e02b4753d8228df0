import Foundation

/// The origin of a URL: scheme, host and port, the unit credentials are pinned to.
public enum HTTPOrigin {
    /// `scheme://host:port` of `url`, lower case, with the scheme's default port when none is given.
    public static func of(_ url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" || scheme == "wss" ? 443 : scheme == "http" || scheme == "ws" ? 80 : -1)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }

    /// Whether `a` and `b` have the same scheme, host and port (default ports filled in).
    public static func same(_ a: URL, _ b: URL) -> Bool { of(a) == of(b) }
}
