import Foundation

/// Keeping secrets out of error texts: URL user info, query values and tokens carried in a path
/// never appear in what ``WireHTTPError`` (or a Kit's error built on it) says.
public enum Redaction {
    /// The placeholder written where a secret was.
    public static let placeholder = "<redacted>"

    /// Path prefixes whose rest is a credential (Nightscout's JWT exchange takes the access token
    /// in the path: `/api/v2/authorization/request/<token>`).
    public static let secretPathPrefixes = ["/authorization/request/"]

    /// `path` with the credential after any of ``secretPathPrefixes`` replaced.
    public static func path(_ path: String) -> String {
        for prefix in secretPathPrefixes {
            if let r = path.range(of: prefix) { return String(path[..<r.upperBound]) + placeholder }
        }
        return path
    }

    /// `url` for messages: `scheme://host[:port]` and the redacted path; no user info, no query,
    /// no fragment.
    public static func url(_ url: URL) -> String {
        var text = "\(url.scheme?.lowercased() ?? "")://\(url.host ?? "")"
        if let port = url.port { text += ":\(port)" }
        return text + path(url.path)
    }

    /// `text` with every secret `url` carries (user, password, the whole query and each query
    /// value, a token in its path) replaced, for texts from lower layers that may quote the URL.
    public static func scrub(_ text: String, of url: URL) -> String {
        var secrets: [String] = []
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        if let user = components?.user { secrets.append(user) }
        if let password = components?.password { secrets.append(password) }
        if let query = components?.percentEncodedQuery { secrets.append(query) }
        for item in components?.queryItems ?? [] { if let v = item.value { secrets.append(v) } }
        let full = url.path
        if path(full) != full, let r = full.range(of: secretPathPrefixes.first { full.contains($0) }!) {
            secrets.append(String(full[r.upperBound...]))
        }
        var out = text
        for secret in secrets.sorted(by: { $0.count > $1.count }) where secret.count >= 3 {
            out = out.replacingOccurrences(of: secret, with: placeholder)
        }
        return out
    }
}
