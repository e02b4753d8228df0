import Foundation
import LookoutWire

/// Cookie and query helpers of the simulated SSO.
enum GarminSimCookies {
    /// The value of a cookie in the request's `Cookie` header.
    static func value(_ name: String, in req: SimRequest) -> String? {
        guard let header = req.header("cookie") else { return nil }
        for part in header.split(separator: ";") {
            let kv = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if kv.count == 2, kv[0] == name { return String(kv[1]) }
        }
        return nil
    }
    /// `Set-Cookie` headers of a fresh session (plus Cloudflare-like LB cookies).
    static func setSession(_ id: String) -> [(String, String)] {
        [
            ("Set-Cookie", "SESSION=\(id); Path=/; Secure; HttpOnly"),
            ("Set-Cookie", "__cflb=sim\(id.prefix(8)); Path=/; HttpOnly"),
            ("Set-Cookie", "__VCAP_ID__=\(id.suffix(8)); Path=/"),
        ]
    }
}

/// Flow A: the mobile JSON SSO (§3).
enum GarminSimMobileSSO {
    /// `GET /mobile/sso/en/sign-in`: a fresh session.
    static func signInPage(_ req: SimRequest, sim: GarminSimulator) async -> SimResponse {
        guard req.queryValue("clientId") == "GCM_ANDROID_DARK" else { return .text(400, "clientId must be GCM_ANDROID_DARK") }
        let id = await sim.state.newSession()
        return .text(200, "<html><head><title>Garmin SSO Portal</title></head><body></body></html>", contentType: "text/html")
            .with(headers: GarminSimCookies.setSession(id))
    }

    /// `POST /mobile/api/login` and `POST /mobile/api/mfa/verifyCode` (`mfa`).
    static func apiLogin(_ req: SimRequest, sim: GarminSimulator, mfa: Bool) async -> SimResponse {
        let o = sim.options
        guard o.mobileLoginEnabled else { return .text(404, "Not Found") }
        if let bad = checkLoginQuery(req, domain: o.domain) { return .text(400, bad) }
        guard let sid = GarminSimCookies.value("SESSION", in: req), await sim.state.session(sid) != nil else {
            return .json(403, ["error": "no SSO session (GET /mobile/sso/en/sign-in first)"])
        }
        guard req.header("content-type")?.hasPrefix("application/json") == true, let body = req.json?.objectValue else {
            return .json(400, ["error": "JSON body expected"])
        }
        if !mfa { return await login(body, sid: sid, sim: sim) }
        return await verify(body, sid: sid, sim: sim)
    }

    /// `clientId`, `locale`, `service` exactly (built from the domain).
    static func checkLoginQuery(_ req: SimRequest, domain: String) -> String? {
        let want = [
            ("clientId", "GCM_ANDROID_DARK"), ("locale", "en-US"), ("service", "https://mobile.integration.\(domain)/gcm/android"),
        ]
        for (k, v) in want where req.queryValue(k) != v { return "query \(k) must be \(v)" }
        return nil
    }

    static func status(_ type: String, _ message: String = "", http: Int = 200) -> JSONValue {
        ["type": .string(type), "message": .string(message), "httpStatus": .string(http == 200 ? "OK" : "UNAUTHORIZED")]
    }

    static func login(_ body: [String: JSONValue], sid: String, sim: GarminSimulator) async -> SimResponse {
        await sim.state.countLogin()
        guard let user = body["username"]?.stringValue, let pass = body["password"]?.stringValue,
            body["rememberMe"]?.boolValue != nil, body["captchaToken"]?.stringValue != nil
        else { return .json(400, ["error": "username, password (strings), rememberMe (bool), captchaToken (string) required"]) }
        guard sim.options.users[user] == pass else {
            return .json(
                401,
                [
                    "serviceURL": .null, "serviceTicketId": .null,
                    "responseStatus": status("INVALID_USERNAME_PASSWORD", "generalLoginInvalidUsernameOrPassword", http: 401),
                ])
        }
        if sim.options.mfaUsers.contains(user) {
            await sim.state.update(sid) { $0.pendingMFA = user }
            return .json(
                200,
                [
                    "serviceURL": .null, "serviceTicketId": .null, "responseStatus": status("MFA_REQUIRED"),
                    "customerMfaInfo": [
                        "email": "m***@example.com", "phoneNumber": .null, "mfaLastMethodUsed": "email", "defaultMfaMethod": "email",
                    ],
                ])
        }
        let ticket = await sim.state.issueTicket(email: user, mobile: true)
        return .json(
            200,
            [
                "serviceURL": .string("https://mobile.integration.\(sim.options.domain)/gcm/android"),
                "serviceTicketId": .string(ticket), "responseStatus": status("SUCCESSFUL"),
            ])
    }

    static func verify(_ body: [String: JSONValue], sid: String, sim: GarminSimulator) async -> SimResponse {
        guard let user = await sim.state.session(sid)?.pendingMFA else {
            return .json(400, ["responseStatus": status("MFA_NOT_PENDING", "no login waiting for a code")])
        }
        guard body["mfaMethod"]?.stringValue != nil, let code = body["mfaVerificationCode"]?.stringValue,
            body["rememberMyBrowser"]?.boolValue != nil, body["reconsentList"]?.arrayValue != nil, body["mfaSetup"]?.boolValue != nil
        else { return .json(400, ["error": "mfaMethod, mfaVerificationCode, rememberMyBrowser, reconsentList, mfaSetup required"]) }
        guard code == sim.options.mfaCode else {
            return .json(400, ["responseStatus": status("MFA_CODE_INVALID", "invalid code")])
        }
        await sim.state.update(sid) { $0.pendingMFA = nil }
        await sim.state.countMFA()
        let ticket = await sim.state.issueTicket(email: user, mobile: true)
        return .json(200, ["serviceTicketId": .string(ticket), "responseStatus": status("SUCCESSFUL")])
    }
}

/// Flow B: the classic widget SSO (§5).
enum GarminSimWidgetSSO {
    static func page(_ title: String, _ body: String) -> String {
        "<!DOCTYPE html><html><head><title>\(title)</title></head><body>\(body)</body></html>"
    }
    static func csrfInput(_ csrf: String) -> String { "<input type=\"hidden\" name=\"_csrf\" value=\"\(csrf)\"/>" }

    /// The embed URL the widget flow's `service` and `gauthHost` must be.
    static func embedURL(_ sim: GarminSimulator) -> String { "https://sso.\(sim.options.domain)/sso/embed" }

    /// `GET /sso/embed`: a fresh session.
    static func embed(_ req: SimRequest, sim: GarminSimulator) async -> SimResponse {
        guard req.queryValue("gauthHost") == "https://sso.\(sim.options.domain)/sso" else { return .text(400, "gauthHost") }
        let id = await sim.state.newSession()
        return .text(200, page("GAuth Embedded Version", ""), contentType: "text/html").with(headers: GarminSimCookies.setSession(id))
    }

    /// `GET`/`POST /sso/signin` and `/sso/verifyMFA/loginEnterMfaCode` (`mfa`): the form with a
    /// fresh `_csrf`, or its submission.
    static func form(_ req: SimRequest, sim: GarminSimulator, mfa: Bool) async -> SimResponse {
        let e = embedURL(sim)
        let signinQuery = "id=gauth-widget&embedWidget=true&gauthHost=\(pe(e))&service=\(pe(e))&source=\(pe(e))"
            + "&redirectAfterAccountLoginUrl=\(pe(e))&redirectAfterAccountCreationUrl=\(pe(e))"
        if req.queryValue("service") != e || req.queryValue("gauthHost") != e { return .text(400, "service and gauthHost must be \(e)") }
        guard let sid = GarminSimCookies.value("SESSION", in: req), await sim.state.session(sid) != nil else {
            return .text(403, page("Forbidden", "no session"))
        }
        if req.method == "GET" {
            let csrf = GarminSimState.random(32)
            await sim.state.update(sid) { $0.csrf = csrf }
            return .text(
                200, page(mfa ? "Enter MFA code for login" : "GARMIN Authentication Application", "<form>\(csrfInput(csrf))</form>"),
                contentType: "text/html")
        }
        let form = Dictionary(SimRequest.parseQuery(String(decoding: req.body, as: UTF8.self)), uniquingKeysWith: { a, _ in a })
        guard let csrf = form["_csrf"], csrf == (await sim.state.session(sid)?.csrf) else {
            return .text(403, page("Forbidden", "invalid CSRF token"), contentType: "text/html")
        }
        if !mfa { return await signin(form, sid: sid, sim: sim, signinQuery: signinQuery) }
        return await verify(form, sid: sid, sim: sim, signinQuery: signinQuery)
    }

    /// `GET /sso/login?logintoken=LT-…`: the success page with a ticket.
    static func loginToken(_ req: SimRequest, sim: GarminSimulator) async -> SimResponse {
        guard let sid = GarminSimCookies.value("SESSION", in: req),
            let user = req.queryValue("logintoken").flatMap({ $0.hasPrefix("LT-") ? String($0.dropFirst(3)) : nil }),
            await sim.state.session(sid) != nil
        else { return .text(403, page("Forbidden", "")) }
        return await success(user: user, sim: sim)
    }

    static func signin(_ form: [String: String], sid: String, sim: GarminSimulator, signinQuery: String) async -> SimResponse {
        await sim.state.countLogin()
        guard form["embed"] == "true", let user = form["username"], let pass = form["password"] else {
            return .text(400, page("Bad Request", "username, password, embed required"), contentType: "text/html")
        }
        guard sim.options.users[user] == pass else {
            return .text(401, page("GARMIN Authentication Application", "Invalid sign in. (Passwords are case sensitive.)"), contentType: "text/html")
        }
        if sim.options.mfaUsers.contains(user) {
            await sim.state.update(sid) { $0.pendingMFA = user }
            return .empty(302, headers: [("Location", "/sso/verifyMFA/loginEnterMfaCode?\(signinQuery)")])
        }
        return await success(user: user, sim: sim)
    }

    static func verify(_ form: [String: String], sid: String, sim: GarminSimulator, signinQuery: String) async -> SimResponse {
        guard let user = await sim.state.session(sid)?.pendingMFA else { return .text(400, page("Bad Request", "no MFA pending")) }
        guard form["mfa-code"] == sim.options.mfaCode, form["embed"] == "true", form["fromPage"] == "setupEnterMfaCode" else {
            let csrf = GarminSimState.random(32)
            await sim.state.update(sid) { $0.csrf = csrf }
            return .text(200, page("Enter MFA code for login", "Invalid code. <form>\(csrfInput(csrf))</form>"), contentType: "text/html")
        }
        await sim.state.update(sid) { $0.pendingMFA = nil }
        await sim.state.countMFA()
        return .empty(302, headers: [("Location", "/sso/login?logintoken=LT-\(pe(user))&service=\(pe("https://sso.\(sim.options.domain)/sso/embed"))")])
    }

    static func success(user: String, sim: GarminSimulator) async -> SimResponse {
        let ticket = await sim.state.issueTicket(email: user, mobile: false)
        let d = sim.options.domain
        let script = "<script>var response_url = \"https:\\/\\/sso.\(d)\\/sso\\/embed?ticket=\(ticket)\";</script>"
        return .text(200, page("Success", script), contentType: "text/html")
    }

    /// Strict percent-encoding for query values.
    static func pe(_ s: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s
    }
}
