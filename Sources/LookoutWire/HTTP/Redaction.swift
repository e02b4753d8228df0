import Foundation

/// Keeping secrets out of what people see: URL user info, query values and tokens carried in a
/// path never appear in what ``WireHTTPError`` (or a Kit's error built on it) says (``url(_:)``,
/// ``scrub(_:of:)``), nor in support bundles, diagnostics and `tostring` of clients
/// (``display(_:)``, ``text(_:secrets:)``).
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

    // MARK: Text meant for people
    /// The replacement for a removed secret in text meant for people.
    public static let mark = "‹redacted›"

    /// A URL for people (support bundles, `tostring` of clients, `config.get`): the whole URL
    /// without user info and without query values (`token=…` and friends), which are ``mark``ed.
    public static func display(_ url: URL) -> String {
        guard var c = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return mark }
        if c.user != nil || c.password != nil { c.user = mark; c.password = nil }
        c.queryItems = c.queryItems?.map { URLQueryItem(name: $0.name, value: $0.value == nil ? nil : mark) }
        return c.string ?? mark
    }

    /// `text` as it is unless it is a URL with user info or a query (either may hold a credential):
    /// then as ``display(_:)`` gives it. Text that contains `://` but does not parse loses anything
    /// shaped like a token (``text(_:secrets:)``). For values shown to scripts (`config.get`).
    public static func displayText(_ text: String) -> String {
        guard text.contains("://") else { return text }
        guard let u = URL(string: text), let c = URLComponents(url: u, resolvingAgainstBaseURL: true) else {
            return Self.text(text, secrets: [])
        }
        guard c.user != nil || c.password != nil || c.query != nil else { return text }
        return display(u)
    }

    /// `text` with every occurrence of each secret (of 4 characters or more) replaced, and
    /// anything shaped like a JWT or a bearer token removed.
    public static func text(_ text: String, secrets: [String]) -> String {
        var out = text
        for s in secrets.filter({ $0.count >= 4 }).sorted(by: { $0.count > $1.count }) {
            out = out.replacingOccurrences(of: s, with: mark)
        }
        for pattern in [#"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"#, #"(?i)(bearer|token=|secret=)\s*[A-Za-z0-9._~+/=-]{8,}"#] {
            out = out.replacingOccurrences(of: pattern, with: mark, options: .regularExpression)
        }
        return out
    }
}
