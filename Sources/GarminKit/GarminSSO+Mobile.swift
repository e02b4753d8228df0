import Foundation
import LookoutWire

extension GarminSSO {
    /// `LP`: clientId, locale, service (built from the domain).
    var mobileLoginQuery: [(String, String)] {
        [("clientId", GarminKit.clientID), ("locale", "en-US"), ("service", GarminKit.mobileServiceURL(domain: configuration.domain))]
    }

    /// Flow A (§3): sign-in page for cookies, JSON login, MFA, LB pin, then OAuth.
    func mobileLogin(email: String, password: String, mfa: GarminMFAHandler?) async throws -> GarminLoginResult {
        let jar = GarminCookieJar()
        logger.debug("garmin: SSO login (mobile flow)")
        let signIn = GarminURL.make(configuration.sso, "/mobile/sso/en/sign-in", [("clientId", GarminKit.clientID)])
        let page = try await send(
            GarminHTTPRequest(method: "GET", url: signIn, headers: Self.pageHeaders + [("Sec-Fetch-Site", "none")]), jar: jar)
        try GarminHTTPCheck.ok(page, url: signIn)

        let loginURL = GarminURL.make(configuration.sso, "/mobile/api/login", mobileLoginQuery)
        let body: JSONValue = .object([
            "username": .string(email), "password": .string(password), "rememberMe": .bool(false), "captchaToken": .string(""),
        ])
        let response = try await send(
            GarminHTTPRequest(
                method: "POST", url: loginURL, headers: Self.pageHeaders + [("Content-Type", "application/json")],
                body: body.jsonData), jar: jar)
        if response.status == 401 { throw GarminError.invalidCredentials }
        try GarminHTTPCheck.ok(response, url: loginURL)
        let json = try GarminResponseJSON.parse(response.body)
        let type = json["responseStatus"]?["type"]?.stringValue ?? ""
        switch type {
        case "SUCCESSFUL":
            guard let ticket = json["serviceTicketId"]?.stringValue, !ticket.isEmpty else { throw GarminError.missingTicket }
            return try await mobileComplete(ticket: ticket, referer: loginURL, jar: jar)
        case "MFA_REQUIRED":
            let last = json["customerMfaInfo"]?["mfaLastMethodUsed"]?.stringValue ?? ""
            let state = GarminMFAState(flow: .mobile, method: last.isEmpty ? "email" : last, cookies: jar, referer: loginURL)
            logger.debug("garmin: MFA required", metadata: ["method": "\(state.method)"])
            guard let mfa else { return .needsMFA(state) }
            let (o1, o2) = try await mobileVerify(state, code: try await mfa())
            return .success(o1, o2)
        case "INVALID_USERNAME_PASSWORD":
            throw GarminError.invalidCredentials
        default:
            throw GarminError.sso(
                type: type.isEmpty ? "UNKNOWN" : type, message: GarminRedaction.redact(json["responseStatus"]?["message"]?.stringValue ?? ""))
        }
    }

    /// A3: verify the MFA code, then complete.
    func mobileVerify(_ state: GarminMFAState, code: String) async throws -> (OAuth1Token, OAuth2Token) {
        let code = code.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !code.isEmpty else { throw GarminError.mfaRequired }
        let url = GarminURL.make(configuration.sso, "/mobile/api/mfa/verifyCode", mobileLoginQuery)
        let body: JSONValue = .object([
            "mfaMethod": .string(state.method), "mfaVerificationCode": .string(code), "rememberMyBrowser": .bool(false),
            "reconsentList": .array([]), "mfaSetup": .bool(false),
        ])
        let response = try await send(
            GarminHTTPRequest(method: "POST", url: url, headers: Self.pageHeaders + [("Content-Type", "application/json")], body: body.jsonData),
            jar: state.cookies)
        if [400, 401, 403].contains(response.status) { throw GarminError.mfaCodeInvalid }
        try GarminHTTPCheck.ok(response, url: url)
        let json = try GarminResponseJSON.parse(response.body)
        let type = json["responseStatus"]?["type"]?.stringValue ?? ""
        if type == "MFA_CODE_INVALID" { throw GarminError.mfaCodeInvalid }
        guard type == "SUCCESSFUL" else {
            throw GarminError.sso(
                type: type.isEmpty ? "UNKNOWN" : type, message: GarminRedaction.redact(json["responseStatus"]?["message"]?.stringValue ?? ""))
        }
        guard let ticket = json["serviceTicketId"]?.stringValue, !ticket.isEmpty else { throw GarminError.missingTicket }
        switch try await mobileComplete(ticket: ticket, referer: url, jar: state.cookies) {
        case .success(let o1, let o2): return (o1, o2)
        case .needsMFA: throw GarminError.mfaRequired
        }
    }

    /// A4 (best effort), A6, A7 with `audience`.
    func mobileComplete(ticket: String, referer: URL, jar: GarminCookieJar) async throws -> GarminLoginResult {
        let pin = GarminURL.make(configuration.sso, "/portal/sso/embed", [])
        _ = try? await send(
            GarminHTTPRequest(
                method: "GET", url: pin,
                headers: Self.pageHeaders + [("Sec-Fetch-Site", "same-origin"), ("Referer", referer.absoluteString)]),
            jar: jar)
        let (o1, o2) = try await finish(
            ticket: ticket, loginURL: GarminKit.mobileServiceURL(domain: configuration.domain), audience: true, jar: jar)
        return .success(o1, o2)
    }
}
