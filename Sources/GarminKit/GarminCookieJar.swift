import Foundation

/// The cookies of one SSO session (name → value). garth copies the SSO cookies into the OAuth1
/// session, so the jar sends every cookie on every request of the login, whatever the host.
actor GarminCookieJar {
    private var cookies: [(String, String)] = []
    /// The widget flow's current CSRF token (the MFA page may issue a new one after a wrong code).
    var csrf: String?

    /// Sets the widget flow's CSRF token.
    func setCSRF(_ value: String?) { csrf = value }

    /// Stores the cookies of a response's `Set-Cookie` headers (an empty value or an expiry in
    /// the past via `Max-Age=0` deletes the cookie).
    func store(_ response: GarminHTTPResponse) {
        for line in response.headers("Set-Cookie") {
            let parts = line.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = parts.first, let eq = first.firstIndex(of: "=") else { continue }
            let name = String(first[..<eq]), value = String(first[first.index(after: eq)...])
            let expired = parts.dropFirst().contains { $0.lowercased() == "max-age=0" }
            cookies.removeAll { $0.0 == name }
            if !expired && !value.isEmpty { cookies.append((name, value)) }
        }
    }

    /// The `Cookie` header value, or nil when the jar is empty.
    func header() -> String? {
        cookies.isEmpty ? nil : cookies.map { "\($0.0)=\($0.1)" }.joined(separator: "; ")
    }

    /// Cookie names (for tests and diagnostics; values are not exposed).
    func names() -> [String] { cookies.map(\.0) }
}
