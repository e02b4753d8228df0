import Foundation

extension GarminSSO {
    /// `S = https://sso.{domain}/sso`.
    var widgetSSO: String { "https://sso.\(configuration.domain)/sso" }

    /// `SIGNIN_Q` in garth's order.
    var signinQuery: [(String, String)] {
        let e = GarminKit.widgetEmbedURL(domain: configuration.domain)
        return [
            ("id", "gauth-widget"), ("embedWidget", "true"), ("gauthHost", e), ("service", e), ("source", e),
            ("redirectAfterAccountLoginUrl", e), ("redirectAfterAccountCreationUrl", e),
        ]
    }

    /// Flow B (§5): embed page, sign-in page (CSRF), form POST, MFA page, success page.
    func widgetLogin(email: String, password: String, mfa: GarminMFAHandler?) async throws -> GarminLoginResult {
        let jar = GarminCookieJar()
        logger.debug("garmin: SSO login (widget flow)")
        let headers = [("User-Agent", GarminKit.ssoUserAgent)]
        let embed = GarminURL.make(
            configuration.sso, "/sso/embed", [("id", "gauth-widget"), ("embedWidget", "true"), ("gauthHost", widgetSSO)])
        let (embedPage, embedURL) = try await sendFollowing(GarminHTTPRequest(method: "GET", url: embed, headers: headers), jar: jar)
        try GarminHTTPCheck.ok(embedPage, url: embed)

        let signin = GarminURL.make(configuration.sso, "/sso/signin", signinQuery)
        let (signinPage, signinURL) = try await sendFollowing(
            GarminHTTPRequest(method: "GET", url: signin, headers: headers + [("Referer", embedURL.absoluteString)]), jar: jar)
        try GarminHTTPCheck.ok(signinPage, url: signin)
        guard let csrf = Self.csrf(signinPage.text) else { throw GarminError.missingCSRF }

        let form = OAuth1Signer.encodeForm([("username", email), ("password", password), ("embed", "true"), ("_csrf", csrf)])
        let (result, resultURL) = try await sendFollowing(
            GarminHTTPRequest(
                method: "POST", url: signin,
                headers: headers + [("Referer", signinURL.absoluteString), ("Content-Type", "application/x-www-form-urlencoded")],
                body: Data(form.utf8)), jar: jar)
        if result.status == 401 { throw GarminError.invalidCredentials }
        try GarminHTTPCheck.ok(result, url: signin)
        let title = Self.title(result.text) ?? ""
        if title.contains("MFA") {
            await jar.setCSRF(Self.csrf(result.text))
            let state = GarminMFAState(flow: .widget, method: "email", cookies: jar, referer: resultURL)
            logger.debug("garmin: MFA required (widget flow)")
            guard let mfa else { return .needsMFA(state) }
            let (o1, o2) = try await widgetVerify(state, code: try await mfa())
            return .success(o1, o2)
        }
        let (o1, o2) = try await widgetComplete(result.text, title: title, jar: jar)
        return .success(o1, o2)
    }

    /// B5: post the code; a wrong code shows the MFA page again.
    func widgetVerify(_ state: GarminMFAState, code: String) async throws -> (OAuth1Token, OAuth2Token) {
        let code = code.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !code.isEmpty else { throw GarminError.mfaRequired }
        guard let csrf = await state.cookies.csrf else { throw GarminError.missingCSRF }
        let url = GarminURL.make(configuration.sso, "/sso/verifyMFA/loginEnterMfaCode", signinQuery)
        let form = OAuth1Signer.encodeForm([
            ("mfa-code", code), ("embed", "true"), ("_csrf", csrf), ("fromPage", "setupEnterMfaCode"),
        ])
        var headers = [("User-Agent", GarminKit.ssoUserAgent), ("Content-Type", "application/x-www-form-urlencoded")]
        if let r = state.referer { headers.append(("Referer", r.absoluteString)) }
        let (result, _) = try await sendFollowing(
            GarminHTTPRequest(method: "POST", url: url, headers: headers, body: Data(form.utf8)), jar: state.cookies)
        try GarminHTTPCheck.ok(result, url: url)
        let title = Self.title(result.text) ?? ""
        if title.contains("MFA") {
            await state.cookies.setCSRF(Self.csrf(result.text))
            throw GarminError.mfaCodeInvalid
        }
        return try await widgetComplete(result.text, title: title, jar: state.cookies)
    }

    /// B4 and the OAuth steps (no `audience`).
    func widgetComplete(_ page: String, title: String, jar: GarminCookieJar) async throws -> (OAuth1Token, OAuth2Token) {
        guard title == "Success" else { throw GarminError.unexpectedTitle(GarminRedaction.redact(title, limit: 80)) }
        guard let ticket = Self.firstMatch(#"embed\?ticket=([^"]+)""#, in: page) else { throw GarminError.missingTicket }
        return try await finish(
            ticket: ticket, loginURL: GarminKit.widgetEmbedURL(domain: configuration.domain), audience: false, jar: jar)
    }

    static func csrf(_ page: String) -> String? { firstMatch(#"name="_csrf"\s+value="(.+?)""#, in: page) }
    static func title(_ page: String) -> String? { firstMatch(#"<title>(.+?)</title>"#, in: page) }

    static func firstMatch(_ pattern: String, in text: String) -> String? {
        guard let re = try? NSRegularExpression(pattern: pattern),
            let m = re.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)), let r = Range(m.range(at: 1), in: text)
        else { return nil }
        return String(text[r])
    }
}
