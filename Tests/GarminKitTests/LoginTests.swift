import Foundation
import GarminKit
import LookoutSim
import XCTest

/// SSO login against the simulator: both flows, MFA (handler and two-phase), fallback, errors.
final class LoginTests: XCTestCase {
    func testMobileLoginIssuesBothTokensWithAudienceExchange() async throws {
        let (sim, url) = try await GarminSims.shared.sim("main")
        let before = await sim.counters()
        let c = try GarminTest.client(url, flow: .mobile)
        guard case .success(let o1, let o2) = try await c.login(email: GarminTest.email, password: GarminTest.password) else {
            return XCTFail("expected success")
        }
        XCTAssertNil(o1.mfaToken)
        XCTAssertEqual(o1.domain, "garmin.com")
        XCTAssertEqual(o2.tokenType, "bearer")
        XCTAssertEqual(o2.authorizationHeader, "Bearer \(o2.accessToken)")
        XCTAssertGreaterThan(o2.expiresAt, Int(Date().timeIntervalSince1970) + 3000)
        let after = await sim.counters()
        XCTAssertEqual(after.logins - before.logins, 1)
        XCTAssertEqual(after.exchanges - before.exchanges, 1)
        // The refresh exchange must not send `audience` (the simulator answers 403 if it does).
        try await c.refresh()
        let status = await c.status()
        XCTAssertTrue(status.loggedIn)
        XCTAssertFalse(status.needsRefresh)
    }

    func testWrongPasswordIsInvalidCredentialsInBothFlows() async throws {
        let (_, url) = try await GarminSims.shared.sim("main")
        for flow in [GarminSSOFlow.mobile, .widget, .mobileThenWidget] {
            let c = try GarminTest.client(url, flow: flow)
            await assertGarminError(.invalidCredentials) { try await c.login(email: GarminTest.email, password: "wrong") }
            let status = await c.status()
            XCTAssertFalse(status.loggedIn)
        }
    }

    func testMFAWithHandlerCallsItOnceAndKeepsTheMFAToken() async throws {
        let (sim, url) = try await GarminSims.shared.sim("main")
        for flow in [GarminSSOFlow.mobile, .widget] {
            let calls = Counter()
            let before = await sim.counters()
            let c = try GarminTest.client(url, flow: flow)
            let result = try await c.login(email: GarminTest.mfaEmail, password: GarminTest.password) {
                await calls.increment()
                return "123456"
            }
            guard case .success(let o1, _) = result else { return XCTFail("expected success (\(flow))") }
            let n = await calls.value
            XCTAssertEqual(n, 1)
            XCTAssertNotNil(o1.mfaToken)
            XCTAssertNotNil(o1.mfaExpirationTimestamp)
            let verified = await sim.counters().mfaVerifications
            XCTAssertEqual(verified - before.mfaVerifications, 1)
            // Refresh exchanges must echo mfa_token (the simulator answers 401 otherwise).
            try await c.refresh()
            _ = try await c.profile()
        }
    }

    func testTwoPhaseMFAAndWrongCode() async throws {
        let (_, url) = try await GarminSims.shared.sim("main")
        for flow in [GarminSSOFlow.mobile, .widget] {
            let c = try GarminTest.client(url, flow: flow)
            guard case .needsMFA(let state) = try await c.login(email: GarminTest.mfaEmail, password: GarminTest.password) else {
                return XCTFail("expected needsMFA (\(flow))")
            }
            XCTAssertEqual(state.flow.rawValue, flow.rawValue)
            await assertGarminError(.mfaCodeInvalid) { try await c.resumeLogin(state, code: "000000") }
            let (o1, _) = try await c.resumeLogin(state, code: "123456")
            XCTAssertNotNil(o1.mfaToken)
            let loggedIn = await c.status().loggedIn
            XCTAssertTrue(loggedIn)
        }
    }

    func testEmptyMFACodeFromHandlerIsMFARequired() async throws {
        let (_, url) = try await GarminSims.shared.sim("main")
        let c = try GarminTest.client(url, flow: .mobile)
        await assertGarminError(.mfaRequired) { try await c.login(email: GarminTest.mfaEmail, password: GarminTest.password) { "  " } }
    }

    func testWidgetFallbackWhenMobileLoginIsUnavailable() async throws {
        let (sim, url) = try await GarminSims.shared.sim("nomobile", .init(mobileLoginEnabled: false))
        let c = try GarminTest.client(url)
        let before = await sim.counters()
        guard case .success(let o1, _) = try await c.login(email: GarminTest.email, password: GarminTest.password) else {
            return XCTFail("expected success")
        }
        XCTAssertEqual(o1.domain, "garmin.com")
        let after = await sim.counters()
        XCTAssertEqual(after.logins - before.logins, 1, "only the widget login reached the account check")
        // Mobile only: the 404 surfaces.
        let m = try GarminTest.client(url, flow: .mobile)
        do {
            _ = try await m.login(email: GarminTest.email, password: GarminTest.password)
            XCTFail("expected 404")
        } catch let e as GarminError {
            XCTAssertEqual(e.status, 404)
        }
    }

    func testRateLimitedLoginIsNotRetried() async throws {
        let (sim, url) = try await GarminSims.shared.sim("ratelimit-login")
        await sim.injectFault(status: 429, pathPrefix: "/mobile/api/login", count: 1, retryAfter: 120)
        let c = try GarminTest.client(url, flow: .mobile)
        await assertGarminError(.rateLimited(retryAfter: 120)) {
            try await c.login(email: GarminTest.email, password: GarminTest.password)
        }
        let counters = await sim.counters()
        XCTAssertEqual(counters.logins, 0)
        XCTAssertEqual(counters.injectedFaults, 1)
        // Default flow: a 429 on the mobile endpoint falls back to the widget flow once.
        await sim.injectFault(status: 429, pathPrefix: "/mobile/api/login", count: 1)
        let d = try GarminTest.client(url)
        guard case .success = try await d.login(email: GarminTest.email, password: GarminTest.password) else {
            return XCTFail("expected success through the widget flow")
        }
    }

    func testChinaDomainIdentifiers() async throws {
        let (_, url) = try await GarminSims.shared.sim("cn", .init(domain: "garmin.cn"))
        for flow in [GarminSSOFlow.mobile, .widget] {
            let c = try GarminClient(configuration: .local(url, domain: "garmin.cn", ssoFlow: flow))
            guard case .success(let o1, _) = try await c.login(email: GarminTest.email, password: GarminTest.password) else {
                return XCTFail("expected success")
            }
            XCTAssertEqual(o1.domain, "garmin.cn")
        }
        XCTAssertThrowsError(try GarminConfiguration(domain: "garmin.de"))
        XCTAssertThrowsError(try GarminConfiguration(ssoBaseURL: URL(string: "http://example.com")!))
        XCTAssertNoThrow(try GarminConfiguration(ssoBaseURL: URL(string: "http://localhost:9")!))
        XCTAssertEqual(try GarminConfiguration(domain: "garmin.cn").connectAPI.absoluteString, "https://connectapi.garmin.cn")
    }

    func testUnreachableServerIsATransportError() async throws {
        var config = try GarminConfiguration.local(URL(string: "http://127.0.0.1:1")!, ssoFlow: .mobile)
        config.timeout = 1
        let c = try GarminClient(configuration: config)
        do {
            _ = try await c.login(email: GarminTest.email, password: GarminTest.password)
            XCTFail("expected transport error")
        } catch GarminError.transport(let m) {
            XCTAssertTrue(m.hasPrefix("GET /mobile/sso/en/sign-in"), m)
        }
    }
}

/// An async counter.
actor Counter {
    private(set) var value = 0
    func increment() { value += 1 }
}
