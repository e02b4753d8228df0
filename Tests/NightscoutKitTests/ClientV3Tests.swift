import Foundation
import LookoutSim
import XCTest
@testable import NightscoutKit

final class ClientV3Tests: XCTestCase {
    let h = ClientSimHarness.shared

    private func note(_ device: String, _ offset: TimeInterval, notes: String? = nil) -> Treatment {
        Treatment(common: CommonFields(date: NightscoutDate(epochMilliseconds: simMillis(offset)), app: "kit-tests", device: device),
                  eventType: EventType(rawValue: "Note"), notes: notes)
    }

    func testCreateDeduplicateReadAndSearch() async throws {
        let client = try await h.tokenClient()
        let doc = note("kit-v3-crud", -500, notes: "one")
        let first = try await client.create(.treatments, doc)
        XCTAssertFalse(first.isDeduplicated)
        XCTAssertEqual(first.identifier, doc.computedIdentifier)
        let again = try await client.create(.treatments, doc)
        XCTAssertTrue(again.isDeduplicated)
        XCTAssertEqual(again.identifier, first.identifier)

        let read = try await client.read(Treatment.self, .treatments, identifier: first.identifier)
        XCTAssertEqual(read?.notes, "one")
        XCTAssertEqual(read?.common.identifier, first.identifier)
        let notModified = try await client.read(Treatment.self, .treatments, identifier: first.identifier,
                                                ifModifiedSince: ClientSimHarness.start.addingTimeInterval(86_400))
        XCTAssertNil(notModified)

        for i in 1...4 { _ = try await client.create(.treatments, note("kit-v3-crud", -500 + Double(i))) }
        let filter = V3Search.Filter("device", .eq, "kit-v3-crud")
        let page = try await client.search(Treatment.self, try V3Search(collection: .treatments, limit: 3, filters: [filter]))
        XCTAssertEqual(page.count, 3)
        XCTAssertEqual(page.first?.common.date?.epochMilliseconds, simMillis(-496), "newest first")
        var all: [Treatment] = []
        for try await d in client.searchAll(Treatment.self, try V3Search(collection: .treatments, limit: 2, filters: [filter])) {
            all.append(d)
        }
        XCTAssertEqual(all.count, 5)
        XCTAssertEqual(Set(all.compactMap(\.common.identifier)).count, 5)
    }

    func testUpdatePatchDelete() async throws {
        let client = try await h.tokenClient()
        let created = try await client.create(.treatments, note("kit-v3-upd", -400, notes: "a"))
        var replacement = note("kit-v3-upd", -400, notes: "b")
        replacement.common.identifier = created.identifier
        _ = try await client.update(.treatments, identifier: created.identifier, replacement)
        var read = try await client.read(Treatment.self, .treatments, identifier: created.identifier)
        XCTAssertEqual(read?.notes, "b")
        try await client.patch(.treatments, identifier: created.identifier, fields: ["notes": .string("c")])
        read = try await client.read(Treatment.self, .treatments, identifier: created.identifier)
        XCTAssertEqual(read?.notes, "c")
        try await client.delete(.treatments, identifier: created.identifier)
        do {
            _ = try await client.read(Treatment.self, .treatments, identifier: created.identifier)
            XCTFail("expected 410")
        } catch let error as NightscoutError {
            XCTAssertEqual(error.status, 410)
        }
    }

    func testHistoryPagesInOrderIncludesDeletionsAndSkipsV1Writes() async throws {
        let client = try await h.tokenClient()
        var ids: [String] = []
        for i in 0..<25 {
            h.clock.advance(by: 0.001)
            let food = Food(common: CommonFields(date: NightscoutDate(epochMilliseconds: simMillis(-300 + Double(i))),
                                                 app: "kit-tests", device: "kit-v3-history"),
                            food: "item \(i)", carbs: Double(i))
            ids.append(try await client.create(.food, food).identifier)
        }
        var pages = 0
        var seen: [Food] = []
        var cursor = HistoryCursor()
        for try await page in client.history(Food.self, .food, limit: 10) {
            pages += 1
            seen += page.documents
            cursor = page.cursor
        }
        let mine = seen.filter { $0.common.device == "kit-v3-history" }
        XCTAssertGreaterThanOrEqual(pages, 3)
        XCTAssertEqual(mine.compactMap(\.common.identifier), ids)
        let srv = seen.compactMap { $0.common.srvModified?.epochMilliseconds }
        XCTAssertEqual(srv, srv.sorted())

        // A soft deletion shows up after the cursor.
        h.clock.advance(by: 1)
        try await client.delete(.food, identifier: ids[3])
        let after = try await client.historyPage(Food.self, .food, since: cursor)
        XCTAssertEqual(after.documents.map { $0.common.identifier }, [ids[3]])
        XCTAssertEqual(after.documents.first?.common.isDeleted, true)
        XCTAssertFalse(after.hasMore)

        // Documents written through v1 never appear in v3 history.
        h.clock.advance(by: 1)
        let at = NightscoutDate(Date(timeIntervalSince1970: Double(simMillis(-200)) / 1000), asISOString: true)
        let v1 = try await h.secretClient()
        try await v1.upload(treatments: [Treatment(common: CommonFields(createdAt: at, device: "kit-v1-only"),
                                                   eventType: EventType(rawValue: "Note"))])
        var history: [Treatment] = []
        for try await page in client.history(Treatment.self, .treatments) { history += page.documents }
        XCTAssertFalse(history.isEmpty)
        XCTAssertFalse(history.contains { $0.common.device == "kit-v1-only" })
        let visibleInV1 = try await v1.treatments(try .treatments(from: at.date, through: at.date, count: 10))
        XCTAssertTrue(visibleInV1.contains { $0.common.device == "kit-v1-only" })
    }

    func testServerInformation() async throws {
        let client = try await h.tokenClient()
        _ = try await client.create(.treatments, note("kit-v3-info", -100))
        let version = try await client.version()
        XCTAssertFalse(version.apiVersion.isEmpty)
        let status = try await client.v3Status()
        XCTAssertEqual(status.version, version.version)
        let last = try await client.lastModified()
        XCTAssertNotNil(last.collections["treatments"])
    }

    func testAPISecretCannotUseV3() async throws {
        let client = try await h.secretClient()
        do {
            _ = try await client.v3Status()
            XCTFail("expected unsupportedCredentials")
        } catch NightscoutError.unsupportedCredentials {}
    }

    func testResolvedAPIFollowsCredentialsAndFallsBackWhenServerHasNoV3() async throws {
        let secretAPI = try await h.secretClient().resolvedAPI()
        XCTAssertEqual(secretAPI, .v1, "an API secret cannot use v3")
        let tokenAPI = try await h.tokenClient().resolvedAPI()
        XCTAssertEqual(tokenAPI, .v3)

        // A server without API v3 answers 404 to the probe: the client uses v1, and remembers.
        let (sim, _) = try await h.running()
        let token = try await h.adminAccessToken()
        await sim.inject(.status(404), count: 1, pathPrefix: "/api/v3/version")
        let old = try await h.client(.accessToken(token))
        let first = try await old.resolvedAPI()
        let second = try await old.resolvedAPI()
        XCTAssertEqual([first, second], [.v1, .v1])

        // Without fallback a v3 preference stays v3, and no API at all is an error.
        let (_, url) = try await h.running()
        let strict = NightscoutClient(configuration: try NightscoutConfiguration(
            siteURL: url, credentials: .apiSecret(ClientSimHarness.secret), allowsV1Fallback: false))
        do {
            _ = try await strict.resolvedAPI()
            XCTFail("expected unsupportedCredentials")
        } catch NightscoutError.unsupportedCredentials {}
    }

    func testJWTCredentialsDirectly() async throws {
        let jwt = try await h.tokenClient().currentJWT()
        let client = try await h.client(.jwt(jwt))
        let status = try await client.v3Status()
        XCTAssertFalse(status.version.isEmpty)
        let auth = try await client.verifyAuth()
        XCTAssertTrue(auth.isAuthenticated)
    }

    func testConcurrentCallsShareOneExchange() async throws {
        let client = try await h.tokenClient()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { _ = try await client.lastModified() } }
            try await group.waitForAll()
        }
        let count = await client.jwtCache!.exchangeCount
        XCTAssertEqual(count, 1)
    }

    func testJWTRefreshedWhenExpiring() async throws {
        let client = try await h.tokenClient()
        _ = try await client.v3Status()
        let before = await client.jwtCache!.exchangeCount
        _ = try await client.v3Status()
        let cached = await client.jwtCache!.exchangeCount
        XCTAssertEqual(cached, before, "JWT reused")
        h.clock.advance(by: 8 * 3600)
        _ = try await client.v3Status()
        let after = await client.jwtCache!.exchangeCount
        XCTAssertEqual(after, before + 1, "JWT refreshed near expiry")
    }

    func testJWTRefetchedOnceAfter401() async throws {
        let frozen = h.clock.now()
        let client = try await h.client(.accessToken(try await h.adminAccessToken()), now: { frozen })
        _ = try await client.v3Status()
        let first = await client.jwtCache!.exchangeCount
        XCTAssertEqual(first, 1)
        // The server's clock passes the JWT's expiry; the client's clock does not, so the server
        // answers 401 and the client exchanges again once.
        h.clock.advance(by: 9 * 3600)
        _ = try await client.v3Status()
        let second = await client.jwtCache!.exchangeCount
        XCTAssertEqual(second, 2)
    }

    func testTooManyRequestsCarriesRetryAfter() async throws {
        let (sim, _) = try await h.running()
        let client = try await h.tokenClient()
        await sim.inject(.tooManyRequests(retryAfterSeconds: 7), count: 1, pathPrefix: "/api/v3/version")
        do {
            _ = try await client.version()
            XCTFail("expected 429")
        } catch let error as NightscoutError {
            guard case .temporarilyUnavailable(let status, let after, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(status, 429)
            XCTAssertEqual(after, 7)
            XCTAssertTrue(error.isRetryable)
            XCTAssertEqual(error.retryAfter, 7)
        }
        _ = try await client.version()
    }
}
