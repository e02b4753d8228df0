import Foundation
import Hummingbird

/// Every route of the Garmin simulator, in one place: the OAuth consumer file, both SSO flows, the
/// OAuth1/OAuth2 endpoints and the Connect API, behind injected faults. A path no route answers
/// gets a plain `Not Found` under the SSO and OAuth prefixes, else the Connect API's 404 (after
/// counting the call and checking its token, as for every Connect route).
enum GarminSimRoutes {
    /// The largest request body read.
    static let bodyLimit = 8 * 1024 * 1024

    /// The simulator's router.
    static func router(_ sim: GarminSimulator) -> Router<SimRequestContext> {
        let router = Router(context: SimRequestContext.self)
        router.add(middleware: FaultMiddleware { path in await faultDecision(path: path, sim: sim) })
        router.add(middleware: SimNotFoundMiddleware(bodyLimit: bodyLimit) { await unmatched($0, sim: sim) })
        let routes = SimRoutes(router: router, bodyLimit: bodyLimit)
        routes.get("/oauth_consumer.json") { _ in
            .json(200, ["consumer_key": .string(sim.options.consumerKey), "consumer_secret": .string(sim.options.consumerSecret)])
        }
        sso(routes, sim: sim)
        routes.get("/oauth-service/oauth/preauthorized") { req in await GarminSimOAuth.preauthorized(req, sim: sim) }
        routes.on("/oauth-service/oauth/exchange/user/2.0", [.post]) { req in await GarminSimOAuth.exchange(req, sim: sim) }
        connect(routes, sim: sim)
        return router
    }

    /// Flow A (mobile JSON) and flow B (widget forms).
    static func sso(_ routes: SimRoutes, sim: GarminSimulator) {
        routes.get("/mobile/sso/en/sign-in") { req in await GarminSimMobileSSO.signInPage(req, sim: sim) }
        routes.get("/portal/sso/embed") { _ in .empty(200) }
        routes.on("/mobile/api/login", [.post]) { req in await GarminSimMobileSSO.apiLogin(req, sim: sim, mfa: false) }
        routes.on("/mobile/api/mfa/verifyCode", [.post]) { req in await GarminSimMobileSSO.apiLogin(req, sim: sim, mfa: true) }
        routes.get("/sso/embed") { req in await GarminSimWidgetSSO.embed(req, sim: sim) }
        routes.on("/sso/signin", [.get, .post]) { req in await GarminSimWidgetSSO.form(req, sim: sim, mfa: false) }
        routes.on("/sso/verifyMFA/loginEnterMfaCode", [.get, .post]) { req in
            await GarminSimWidgetSSO.form(req, sim: sim, mfa: true)
        }
        routes.get("/sso/login") { req in await GarminSimWidgetSSO.loginToken(req, sim: sim) }
    }

    /// The Connect API (§12): each route counts the call and checks the bearer token first.
    static func connect(_ routes: SimRoutes, sim: GarminSimulator) {
        typealias C = GarminSimConnect
        func on(_ path: String, _ methods: [HTTPRequest.Method] = [.get],
                _ handler: @escaping @Sendable (GarminSimConnect.Call) async -> SimResponse) {
            routes.on(path, methods) { req in
                switch await C.authorize(req, sim: sim) {
                case .failure(let denied): return denied
                case .success(let call): return await handler(call)
                }
            }
        }
        on("/userprofile-service/socialProfile") { C.socialProfile($0) }
        on("/userprofile-service/userprofile/user-settings") { C.userSettings($0) }
        on("/usersummary-service/usersummary/daily") { C.dailySummary($0) }
        on("/usersummary-service/stats/steps/daily/{start}/{end}") { C.dailySteps($0) }
        on("/wellness-service/wellness/dailyHeartRate") { C.dailyHeartRate($0) }
        on("/wellness-service/wellness/dailyStress/{date}") { C.dailyStress($0) }
        on("/wellness-service/wellness/bodyBattery/events/{date}") { C.bodyBatteryEvents($0) }
        on("/sleep-service/sleep/dailySleepData") { C.dailySleep($0) }
        on("/hrv-service/hrv/{date}") { C.hrv($0) }
        on("/weight-service/weight/dayview/{date}") { C.weightDayView($0) }
        on("/activitylist-service/activities/search/activities") { await C.activities($0) }
        on("/activity-service/activity/{id}", SimRoutes.anyMethod) { c in
            guard let id = c.req.parameters["id"].flatMap({ Int64($0) }) else {
                return .json(404, ["message": .string("Not Found: \(c.req.method) \(c.req.path)")])
            }
            return await C.activity(c.req, id: id, today: c.today, sim: c.sim)
        }
    }

    /// What no route answers.
    static func unmatched(_ req: SimRequest, sim: GarminSimulator) async -> SimResponse {
        let p = req.path
        if p.hasPrefix("/mobile/") || p == "/portal/sso/embed" || p.hasPrefix("/sso/") || p.hasPrefix("/oauth-service/") {
            return .text(404, "Not Found")
        }
        return await GarminSimConnect.unmatched(req, sim: sim)
    }

    /// An injected fault (`GarminSimulator.injectFault`) as an answer: 429 is Cloudflare's HTML
    /// page, any other status JSON; both with `Retry-After` when given.
    static func faultDecision(path: String, sim: GarminSimulator) async -> SimFaults.Decision {
        guard let fault = await sim.state.takeFault(path: path) else { return .init() }
        var h: [(String, String)] = []
        if let after = fault.retryAfter { h.append(("Retry-After", String(after))) }
        let response: SimResponse = fault.status == 429
            ? .text(429, "<html><title>Access denied | used Cloudflare to restrict access</title>error code: 1015</html>", contentType: "text/html")
                .with(headers: h)
            : .json(fault.status, ["error": "injected fault", "status": .int(Int64(fault.status))], headers: h)
        return .init(response: response)
    }
}
