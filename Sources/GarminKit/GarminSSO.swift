import Foundation
import Logging

/// SSO login (spec §3–§5): the mobile JSON flow and the widget form flow, MFA by handler or in
/// two phases, then the preauthorized call and the login exchange.
struct GarminSSO: Sendable {
    let configuration: GarminConfiguration
    let transport: GarminTransport
    let oauth: GarminOAuth
    let logger: Logger

    /// `H_SSO`.
    static let pageHeaders: [(String, String)] = [
        ("User-Agent", GarminKit.ssoUserAgent),
        ("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
        ("Accept-Language", "en-US,en;q=0.9"), ("Sec-Fetch-Mode", "navigate"), ("Sec-Fetch-Dest", "document"),
    ]

    /// Logs in with the configured flow (falling back from mobile to widget when the mobile
    /// endpoints are unavailable).
    func login(email: String, password: String, mfa: GarminMFAHandler?) async throws -> GarminLoginResult {
        switch configuration.ssoFlow {
        case .mobile: return try await mobileLogin(email: email, password: password, mfa: mfa)
        case .widget: return try await widgetLogin(email: email, password: password, mfa: mfa)
        case .mobileThenWidget:
            do { return try await mobileLogin(email: email, password: password, mfa: mfa) } catch let e as GarminError
                where Self.mobileUnavailable(e)
            {
                logger.info("garmin: mobile SSO unavailable, using the widget flow", metadata: ["reason": "\(e)"])
                return try await widgetLogin(email: email, password: password, mfa: mfa)
            }
        }
    }

    /// Finishes a login that returned `.needsMFA`.
    func resume(_ state: GarminMFAState, code: String) async throws -> (OAuth1Token, OAuth2Token) {
        switch state.flow {
        case .mobile: return try await mobileVerify(state, code: code)
        case .widget: return try await widgetVerify(state, code: code)
        }
    }

    /// Errors after which the widget flow is tried.
    static func mobileUnavailable(_ e: GarminError) -> Bool {
        switch e {
        case .rateLimited: return true
        case .http(let s, _, _): return [403, 404, 405].contains(s) || s >= 500
        case .sso(let type, _): return type == "CAPTCHA_REQUIRED"
        default: return false
        }
    }

    /// Sends one SSO request with the session's cookies and stores the cookies it sets.
    func send(_ request: GarminHTTPRequest, jar: GarminCookieJar) async throws -> GarminHTTPResponse {
        var request = request
        if let cookie = await jar.header() { request.headers.append(("Cookie", cookie)) }
        let response = try await transport.send(request, configuration.timeout)
        await jar.store(response)
        return response
    }

    /// Sends and follows redirects (POST → GET on 301/302/303), at most 10; returns the final
    /// response and its URL. A 307/308 that would send a body (the login form, with the password)
    /// to another origin (scheme, host, port) is not followed.
    func sendFollowing(_ request: GarminHTTPRequest, jar: GarminCookieJar) async throws -> (GarminHTTPResponse, URL) {
        var current = request
        for _ in 0..<10 {
            let response = try await send(current, jar: jar)
            guard [301, 302, 303, 307, 308].contains(response.status), let loc = response.header("Location"),
                let next = URL(string: loc, relativeTo: current.url)?.absoluteURL
            else { return (response, current.url) }
            let sameOrigin = next.scheme?.lowercased() == current.url.scheme?.lowercased()
                && next.host?.lowercased() == current.url.host?.lowercased() && next.port == current.url.port
            if (response.status == 307 || response.status == 308) && current.body != nil && !sameOrigin {
                throw GarminError.transport("SSO: a redirect to another origin (\(next.host ?? "?")) would resend the login form; not followed")
            }
            if response.status != 307 && response.status != 308 {
                current.method = "GET"
                current.body = nil
                current.headers.removeAll { $0.0.lowercased() == "content-type" }
            }
            current.headers.removeAll { $0.0.lowercased() == "cookie" }
            current.url = next
        }
        throw GarminError.transport("SSO: too many redirects")
    }

    /// Preauthorized + exchange after a ticket (A5–A7 / B after B4).
    func finish(ticket: String, loginURL: String, audience: Bool, jar: GarminCookieJar) async throws -> (OAuth1Token, OAuth2Token) {
        let oauth1 = try await oauth.preauthorize(ticket: ticket, loginURL: loginURL, cookies: jar)
        let oauth2 = try await oauth.exchange(oauth1, audience: audience)
        return (oauth1, oauth2)
    }
}
