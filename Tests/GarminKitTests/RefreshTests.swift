import Foundation
import GarminKit
import LookoutSim
import XCTest

/// Automatic refresh: expiry, buffer, one shared exchange for concurrent callers, persistence,
/// rejected OAuth1 tokens, server-side expiry.
final class RefreshTests: XCTestCase {
    func testHundredConcurrentCallsOnAnExpiredTokenShareOneExchange() async throws {
        let (sim, url) = try await GarminSims.shared.sim("concurrency")
        let clock = TestClock()
        let c = try await GarminTest.loggedIn(url, clock: clock)
        let old = try await c.validOAuth2Token()
        clock.advance(4000)  // past expires_in (3600) on the client's clock
        let before = await sim.counters()
        let date = GarminTest.today()
        try await withThrowingTaskGroup(of: Int?.self) { group in
            for _ in 0..<100 { group.addTask { try await c.dailySummary(date: date)?.totalSteps } }
            var n = 0
            for try await steps in group {
                XCTAssertNotNil(steps)
                n += 1
            }
            XCTAssertEqual(n, 100)
        }
        let after = await sim.counters()
        XCTAssertEqual(after.exchanges - before.exchanges, 1, "exactly one exchange for 100 concurrent callers")
        XCTAssertEqual(after.apiRequests - before.apiRequests, 100)
        let new = try await c.validOAuth2Token()
        XCTAssertNotEqual(new.accessToken, old.accessToken)
    }

    func testRefreshBufferRefreshesEarlyAndWritesOnlyOAuth2File() async throws {
        let (sim, url) = try await GarminSims.shared.sim("main")
        let dir = GarminTest.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clock = TestClock()
        let c = try await GarminTest.loggedIn(url, dir: dir, clock: clock, buffer: 300)
        let oauth1Path = dir.appendingPathComponent("oauth1_token.json").path
        let oauth1Before = try Data(contentsOf: URL(fileURLWithPath: oauth1Path))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000)], ofItemAtPath: oauth1Path)
        let before = await sim.counters()
        _ = try await c.validOAuth2Token()
        let unchanged = await sim.counters().exchanges
        XCTAssertEqual(unchanged, before.exchanges, "no refresh while outside the buffer")
        clock.advance(3400)  // 200 s before expiry, inside the 300 s buffer
        let refreshed = try await c.validOAuth2Token()
        let changed = await sim.counters().exchanges
        XCTAssertEqual(changed - before.exchanges, 1)
        let onDisk = try GarminTokenStore.load(from: dir)
        XCTAssertEqual(onDisk.oauth2, refreshed)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: oauth1Path)), oauth1Before)
        let mtime = try FileManager.default.attributesOfItem(atPath: oauth1Path)[.modificationDate] as? Date
        XCTAssertEqual(mtime, Date(timeIntervalSince1970: 1_000_000), "oauth1_token.json untouched by a refresh")
        // A new client resumes from the directory without logging in.
        let again = try GarminTest.client(url, dir: dir)
        let tokens = await again.tokens
        XCTAssertEqual(tokens.oauth2, refreshed)
        _ = try await again.profile()
    }

    func testRejectedOAuth1TokenIsOAuth1InvalidAndKept() async throws {
        let (sim, url) = try await GarminSims.shared.sim("revoke")
        let clock = TestClock()
        let c = try await GarminTest.loggedIn(url, clock: clock)
        await sim.revokeOAuth1Tokens()
        clock.advance(4000)
        await assertGarminError(.oauth1Invalid) { try await c.profile() }
        let status = await c.status()
        XCTAssertTrue(status.loggedIn, "the OAuth1 token is kept; the user decides to log in again")
    }

    func testNotAuthenticatedWithoutTokens() async throws {
        let (_, url) = try await GarminSims.shared.sim("main")
        let c = try GarminTest.client(url)
        await assertGarminError(.notAuthenticated) { try await c.profile() }
        await assertGarminError(.notAuthenticated) { try await c.refresh() }
    }

    func testServerSideExpiryGivesHTTP401AndAClientWithTheSameClockRefreshes() async throws {
        let simClock = SimulatedClock(Date())
        let (_, url) = try await GarminSims.shared.sim("short", .init(accessTokenLifetime: 5, clock: simClock.now))
        let shared = TestClock()
        let c = try await GarminTest.loggedIn(url, clock: shared)
        let o2 = try await c.validOAuth2Token()
        XCTAssertEqual(o2.expiresIn, 5)
        _ = try await c.profile()
        simClock.advance(by: 10)  // the server considers the token stale; the client does not yet
        do {
            _ = try await c.profile()
            XCTFail("expected 401")
        } catch let e as GarminError {
            XCTAssertEqual(e.status, 401)
        }
        shared.advance(10)  // now the client sees the expiry and refreshes
        let refreshedProfile = try await c.profile()
        XCTAssertNotNil(refreshedProfile)
    }

    func testGarthEnvironmentVariables() async throws {
        let (_, url) = try await GarminSims.shared.sim("main")
        let dir = GarminTest.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let c = try await GarminClient.fromEnvironment(.local(url), environment: ["GARTH_HOME": dir.path])
        guard case .success = try await c.login(email: GarminTest.email, password: GarminTest.password) else {
            return XCTFail("expected success")
        }
        XCTAssertNotNil(try GarminTokenStore.load(from: dir).oauth1, "login saved to GARTH_HOME")
        let dumped = GarminTokenStore.dumps(await c.tokens)
        let fromToken = try await GarminClient.fromEnvironment(.local(url), environment: ["GARTH_TOKEN": dumped])
        let status = await fromToken.status()
        XCTAssertTrue(status.loggedIn)
        XCTAssertNil(status.directory)
        let viaToken = try await fromToken.profile()
        XCTAssertNotNil(viaToken)
        do {
            _ = try await GarminClient.fromEnvironment(.local(url), environment: ["GARTH_TOKEN": dumped, "GARTH_HOME": dir.path])
            XCTFail("expected an error")
        } catch let e as GarminError {
            XCTAssertEqual(e, .invalidConfiguration("GARTH_HOME and GARTH_TOKEN cannot both be set"))
        }
    }

    func testLogoutRemovesFiles() async throws {
        let (_, url) = try await GarminSims.shared.sim("main")
        let dir = GarminTest.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let c = try await GarminTest.loggedIn(url, dir: dir)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("oauth1_token.json").path))
        try await c.logout()
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("oauth1_token.json").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("oauth2_token.json").path))
        let loggedIn = await c.status().loggedIn
        XCTAssertFalse(loggedIn)
    }
}
