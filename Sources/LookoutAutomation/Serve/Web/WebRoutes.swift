import Foundation
import LookoutStore

/// The web view's routes on the status server (all behind its `StatusDoor`: own Host names only,
/// no state change from another origin):
/// - `GET /web/login?code=C`: uses up a one-time code of `lookout web login`, sets the session
///   cookie (HttpOnly, SameSite=Strict, Path=/web) and sends the browser to `/web/`;
/// - `GET /web/` (`?hours=3|6|12|24`): the page with a session, else the sign-in page (401);
/// - `GET /web/events`: the page's live part as server-sent events (`event: page`), with a session;
/// - `POST /web/ack/<id>` (form: `csrf`, `by`): acknowledges the alert's current episode, with the
///   session and its CSRF token only; `POST /web/snooze/<id>` (form: `csrf`, `by`, `minutes`, one of
///   `snoozeMinutes`) snoozes it the same way (`AlertAcks.snooze`, as `lookout ack --snooze`);
///   `POST /web/logout` ends the session;
/// - `GET /web/assets/style.css`, `/web/assets/app.js`.
/// Every answer carries a Content-Security-Policy that allows only this server's own script and style.
public enum WebRoutes {
    /// The policy of every web answer.
    static let policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// The snoozes the page offers, in minutes.
    static let snoozeMinutes = [15, 30, 60, 120]

    /// The routes over `source` (what the page shows), `sessions` and `acks`.
    /// - Parameters:
    ///   - interval: how often the live stream looks for changes, seconds.
    ///   - secureCookies: mark the session cookie `Secure` (a listener serving https).
    public static func routes(source: WebSnapshotSource, sessions: WebSessions, acks: AlertAcks,
                              interval: Double = 1, secureCookies: Bool = false) -> [StatusRoute] {
        [
            StatusRoute(method: "GET", pathPrefix: "/web") { request in
                secured(await get(request, source: source, sessions: sessions, interval: interval), secureCookies)
            },
            StatusRoute(method: "POST", pathPrefix: "/web/") { request in
                secured(await post(request, sessions: sessions, acks: acks), secureCookies)
            },
        ]
    }

    /// `response` with its cookie marked `Secure` when `secure`.
    static func secured(_ response: StatusResponse, _ secure: Bool) -> StatusResponse {
        guard secure, let cookie = response.headers["Set-Cookie"] else { return response }
        var marked = response
        marked.headers["Set-Cookie"] = cookie + "; Secure"
        return marked
    }

    static func get(_ request: StatusRequest, source: WebSnapshotSource, sessions: WebSessions, interval: Double) async
        -> StatusResponse
    {
        switch request.path {
        case "/web/assets/style.css": return asset(WebAssets.css, type: "text/css; charset=utf-8")
        case "/web/assets/app.js": return asset(WebAssets.js, type: "text/javascript; charset=utf-8")
        case "/web/assets/icon.svg": return asset(WebAssets.icon, type: "image/svg+xml")
        case "/web/login":
            guard let code = AckRoutes.queryValue(request.query, "code"), !code.isEmpty else {
                return html(WebPage.signIn(message: "This sign-in link has no code."), status: 400)
            }
            let opened: WebSessions.Opened?
            do { opened = try sessions.redeem(code: code) } catch {
                return html(WebPage.signIn(message: "Sessions cannot be used: \(error)"), status: 503)
            }
            guard let opened else {
                return html(WebPage.signIn(message: "This sign-in link is used up or expired: run `lookout web login` for a new one."),
                            status: 403)
            }
            var response = html("<!doctype html><title>Signed in</title><a href=\"/web/\">Continue</a>", status: 303)
            response.headers["Location"] = "/web/"
            response.headers["Set-Cookie"] = "\(WebSessions.cookieName)=\(opened.token); Path=/web; HttpOnly; SameSite=Strict; "
                + "Max-Age=\(Int(WebSessions.sessionLifetime))"
            return response
        case "/web", "/web/":
            guard let session = session(request, sessions) else { return html(WebPage.signIn(), status: 401) }
            let snapshot = await source.take(hours: hours(request))
            return html(WebPage.page(snapshot, csrf: session.csrf), status: 200)
        case "/web/events":
            guard case let (token, session)? = sessionWithToken(request, sessions) else {
                return .text("sign in first: lookout web login", status: 401)
            }
            let window = hours(request)
            let stream: @Sendable () -> AsyncStream<String> = {
                AsyncStream { continuation in
                    let producer = Task {
                        var last = ""
                        var quiet = 0.0
                        while !Task.isCancelled {
                            guard sessions.session(token: token) != nil else { break }  // revoked or expired
                            let main = WebPage.main(await source.take(hours: window), csrf: session.csrf)
                            // The clock line changes every second; compare what matters.
                            let key = main.replacingOccurrences(of: #"<p class="small" id="updated"[^\n]*"#, with: "",
                                                                options: .regularExpression)
                            if key != last {
                                last = key
                                quiet = 0
                                continuation.yield(event(main))
                            } else {
                                quiet += interval
                                if quiet >= 15 { quiet = 0; continuation.yield(": keep-alive\n\n") }
                            }
                            try? await Task.sleep(for: .seconds(interval))
                        }
                        continuation.finish()
                    }
                    continuation.onTermination = { _ in producer.cancel() }
                }
            }
            return StatusResponse(status: 200, contentType: "text/event-stream; charset=utf-8", body: Data("retry: 2000\n\n".utf8),
                                  headers: ["Content-Security-Policy": policy, "X-Accel-Buffering": "no"], stream: stream)
        default:
            return .text("not found: GET \(request.path) (the web view is at /web/)", status: 404)
        }
    }

    static func post(_ request: StatusRequest, sessions: WebSessions, acks: AlertAcks) async -> StatusResponse {
        let form = formValues(request.body)
        guard case let (token, session)? = sessionWithToken(request, sessions) else {
            return html(WebPage.signIn(message: "Sign in first: nothing was changed."), status: 401)
        }
        guard let csrf = form["csrf"], WebSessions.constantTimeEqual(csrf, session.csrf) else {
            return .text("forbidden: this form is not from this session's page (CSRF token missing or wrong); nothing was changed",
                         status: 403)
        }
        if request.path == "/web/logout" {
            try? sessions.revoke(token: token)
            var response = html(WebPage.signIn(message: "Signed out."), status: 200)
            response.headers["Set-Cookie"] = "\(WebSessions.cookieName)=; Path=/web; HttpOnly; SameSite=Strict; Max-Age=0"
            return response
        }
        let action: String
        if request.path.hasPrefix("/web/ack/") { action = "ack" } else if request.path.hasPrefix("/web/snooze/") { action = "snooze" } else {
            return .text("not found: POST \(request.path)", status: 404)
        }
        guard let id = String(request.path.dropFirst("/web/\(action)/".count)).removingPercentEncoding, !id.isEmpty, !id.contains("/")
        else { return .text("not found: POST \(request.path)", status: 404) }
        let by = String((form["by"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines).prefix(64))
        let status: Int, json: String
        if action == "snooze" {
            guard let minutes = form["minutes"].flatMap(Int.init), snoozeMinutes.contains(minutes) else {
                return .text("bad request: minutes must be one of \(snoozeMinutes.map(String.init).joined(separator: ", ")); nothing was changed",
                             status: 400)
            }
            (status, json) = await acks.httpSnooze(id: id, by: by.isEmpty ? "web" : by, for: TimeInterval(minutes * 60))
        } else {
            (status, json) = await acks.httpAck(id: id, by: by.isEmpty ? "web" : by)
        }
        let done = action == "snooze" ? "Snoozed" : "Acknowledged"
        guard status == 200 else {
            let title = action == "snooze" ? "Snooze" : "Acknowledge"
            return html(WebPage.signIn(message: "Not \(done.lowercased()): \(json)").replacingOccurrences(of: "<h2 id=\"signin\">Sign in</h2>",
                        with: "<h2 id=\"signin\">\(title)</h2><p><a href=\"/web/\">Back</a></p>"), status: status)
        }
        var response = html("<!doctype html><title>\(done)</title><a href=\"/web/\">Back</a>", status: 303)
        response.headers["Location"] = "/web/#alert-" + WebHTML.escapePath(id)
        return response
    }

    /// One server-sent event carrying `text` (each line its own `data:` field).
    static func event(_ text: String) -> String {
        "event: page\n" + text.split(separator: "\n", omittingEmptySubsequences: false).map { "data: \($0)" }.joined(separator: "\n")
            + "\n\n"
    }

    static func hours(_ request: StatusRequest) -> Int {
        let asked = AckRoutes.queryValue(request.query, "hours").flatMap(Int.init) ?? 6
        return WebSnapshotSource.windows.contains(asked) ? asked : 6
    }

    static func session(_ request: StatusRequest, _ sessions: WebSessions) -> WebSessions.Session? {
        sessionWithToken(request, sessions)?.1
    }

    static func sessionWithToken(_ request: StatusRequest, _ sessions: WebSessions) -> (String, WebSessions.Session)? {
        guard let cookie = request.headers["cookie"] else { return nil }
        for part in cookie.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0] == WebSessions.cookieName, let session = sessions.session(token: pair[1]) {
                return (pair[1], session)
            }
        }
        return nil
    }

    /// The fields of an `application/x-www-form-urlencoded` body (the first of each name).
    static func formValues(_ body: Data) -> [String: String] {
        let text = String(decoding: body.prefix(16 * 1024), as: UTF8.self).replacingOccurrences(of: "+", with: " ")
        var values: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = parts.first.flatMap({ String($0).removingPercentEncoding }), values[name] == nil else { continue }
            values[name] = parts.count > 1 ? String(parts[1]).removingPercentEncoding ?? "" : ""
        }
        return values
    }

    static func html(_ text: String, status: Int) -> StatusResponse {
        StatusResponse(status: status, contentType: "text/html; charset=utf-8", body: Data(text.utf8),
                       headers: ["Content-Security-Policy": policy])
    }

    static func asset(_ text: String, type: String) -> StatusResponse {
        StatusResponse(status: 200, contentType: type, body: Data(text.utf8), headers: ["Content-Security-Policy": policy])
    }
}
