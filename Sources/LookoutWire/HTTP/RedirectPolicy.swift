/// Which redirects ``WireHTTPClient`` follows. The client under it follows none itself, so a
/// redirect never carries credentials anywhere this policy does not allow.
public enum RedirectPolicy: Sendable, Hashable {
    /// None: 3xx answers come back as they are (for flows that follow redirects themselves).
    case none
    /// Only within the request's origin (scheme, host and port), at most `limit`; a redirect to
    /// another origin fails with ``WireHTTPError/Kind/crossOriginRedirect(targetOrigin:)`` without
    /// a request there. 303, and 301/302 after POST, become a GET without body.
    case sameOrigin(limit: Int)

    /// Same-origin redirects, at most 5 (what the Nightscout and Signal K clients use).
    public static let sameOrigin = RedirectPolicy.sameOrigin(limit: 5)
}
