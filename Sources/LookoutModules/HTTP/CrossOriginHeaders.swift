/// Which of a request's headers the `http` module still sends after a redirect to another
/// origin (scheme, host or port). A credential can hide under any header name a script picks
/// (`api-secret`, `x-api-key`, `X-Nightscout-Pass`, …), so this is an allow-list: only headers
/// that describe the request itself survive, every other header the script set (and
/// `Authorization`, `Cookie`, `Origin`) is dropped. Within one origin every header stays.
enum CrossOriginHeaders {
    /// The lower-case names kept on a redirect to another origin.
    static let kept: Set<String> = [
        "accept", "accept-language", "cache-control", "content-language", "content-length", "content-type",
        "pragma", "user-agent",
    ]

    /// `headers` without every header not in ``kept``.
    static func filtered(_ headers: [(name: String, value: String)]) -> [(name: String, value: String)] {
        headers.filter { kept.contains($0.name.lowercased()) }
    }
}
