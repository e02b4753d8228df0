import Foundation

/// Removes secrets from text meant for people: support bundles, bug reports, diagnostics.
public enum Redaction {
    /// The replacement for a removed secret.
    public static let mark = "‹redacted›"

    /// A URL without user info and without query values (`token=…` and friends).
    public static func url(_ url: URL) -> String {
        guard var c = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return mark }
        if c.user != nil || c.password != nil { c.user = mark; c.password = nil }
        c.queryItems = c.queryItems?.map { URLQueryItem(name: $0.name, value: $0.value == nil ? nil : mark) }
        return c.string ?? mark
    }

    /// `text` as it is unless it is a URL with user info or a query (either may hold a credential):
    /// then as ``url(_:)`` gives it. Text that contains `://` but does not parse loses anything
    /// shaped like a token (``text(_:secrets:)``). For values shown to scripts (`config.get`).
    public static func urlText(_ text: String) -> String {
        guard text.contains("://") else { return text }
        guard let u = URL(string: text), let c = URLComponents(url: u, resolvingAgainstBaseURL: true) else {
            return Self.text(text, secrets: [])
        }
        guard c.user != nil || c.password != nil || c.query != nil else { return text }
        return url(u)
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
