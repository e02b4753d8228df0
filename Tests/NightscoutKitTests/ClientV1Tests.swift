import Foundation
import LookoutSim
import XCTest
@testable import NightscoutKit

final class ClientV1Tests: XCTestCase {
    let h = ClientSimHarness.shared

    func testEntriesWithExplicitBoundsReturnMoreThanDefaultCount() async throws {
        let client = try await h.secretClient()
        // 30 readings 10 days before the server's "now": outside the default 4-day window and
        // more than the default count of 10.
        let base = -10 * 86_400.0
        let entries = (0..<30).map { i in
            Entry(common: CommonFields(date: NightscoutDate(epochMilliseconds: simMillis(base + Double(i) * 300)),
                                       device: "kit-v1-bounds"),
                  type: .sgv, sgv: Double(100 + i))
        }
        try await client.upload(entries: entries)
        let from = Date(timeIntervalSince1970: Double(simMillis(base)) / 1000)
        let through = Date(timeIntervalSince1970: Double(simMillis(base + 29 * 300)) / 1000)
        let got = try await client.entries(try .entries(type: .sgv, from: from, through: through, count: 100))
            .filter { $0.common.device == "kit-v1-bounds" }
        XCTAssertEqual(got.count, 30)
        XCTAssertEqual(got.first?.sgv, 129, "newest first")
        XCTAssertEqual(got.last?.sgv, 100)
    }

    func testAllEntriesPagesBackThroughSmallPages() async throws {
        let client = try await h.secretClient()
        let base = -12 * 86_400.0
        // Two readings share the instant of the page boundary (different types).
        var entries = (0..<23).map { i in
            Entry(common: CommonFields(date: NightscoutDate(epochMilliseconds: simMillis(base + Double(i) * 300)),
                                       device: "kit-v1-paging"),
                  type: .sgv, sgv: Double(100 + i))
        }
        entries.append(Entry(common: CommonFields(date: NightscoutDate(epochMilliseconds: simMillis(base + 16 * 300)),
                                                  device: "kit-v1-paging"), type: .mbg, mbg: 140))
        try await client.upload(entries: entries)
        let from = Date(timeIntervalSince1970: Double(simMillis(base)) / 1000)
        let through = Date(timeIntervalSince1970: Double(simMillis(base + 22 * 300)) / 1000)
        var got: [Entry] = []
        for try await e in client.allEntries(try V1Query(collection: .entries, from: from, through: through, count: 7)) {
            got.append(e)
        }
        XCTAssertEqual(got.count, 24)
        XCTAssertEqual(Set(got.compactMap(\.common.id)).count, 24)
        XCTAssertEqual(got.compactMap(\.sgv).first, 122)
    }

    func testTreatmentsDeviceStatusProfileStatusAndVerifyAuth() async throws {
        let client = try await h.secretClient()
        let at = NightscoutDate(Date(timeIntervalSince1970: Double(simMillis(-3600)) / 1000), asISOString: true)
        try await client.upload(treatments: [
            Treatment(common: CommonFields(createdAt: at, device: "kit-v1-misc"), eventType: EventType(rawValue: "Note"),
                      notes: "hello")])
        try await client.upload(deviceStatuses: [DeviceStatus(common: CommonFields(createdAt: at, device: "kit-v1-misc"))])
        let from = Date(timeIntervalSince1970: Double(simMillis(-7200)) / 1000)
        let treatments = try await client.treatments(try .treatments(from: from, count: 100))
        XCTAssertEqual(treatments.filter { $0.common.device == "kit-v1-misc" }.map(\.notes), ["hello"])
        let statuses = try await client.devicestatus(try V1Query(collection: .devicestatus, from: from, count: 100))
        XCTAssertEqual(statuses.filter { $0.common.device == "kit-v1-misc" }.count, 1)
        _ = try await client.profile()
        let status = try await client.status()
        XCTAssertEqual(status.status, "ok")
        let auth = try await client.verifyAuth()
        XCTAssertTrue(auth.isAuthenticated)
        XCTAssertTrue(auth.isAdmin)
        // A query for another collection is rejected before sending.
        do {
            _ = try await client.entries(try .treatments(from: from, count: 1))
            XCTFail("expected invalidRequest")
        } catch NightscoutError.invalidRequest {}
    }

    func testAccessTokenOnV1() async throws {
        let client = try await h.tokenClient()
        let auth = try await client.verifyAuth()
        XCTAssertTrue(auth.isAuthenticated)
        XCTAssertEqual(auth.rolefound, "FOUND")
        let at = NightscoutDate(epochMilliseconds: simMillis(-20 * 86_400))
        try await client.upload(entries: [Entry(common: CommonFields(date: at, device: "kit-v1-token"), type: .sgv, sgv: 99)])
        let got = try await client.entries(try .entries(from: at.date, through: at.date, count: 10))
        XCTAssertEqual(got.filter { $0.common.device == "kit-v1-token" }.map(\.sgv), [99])
    }

    func testBadSecretGives401WithoutLeakingIt() async throws {
        let wrong = "definitely the wrong secret"
        let client = try await h.client(.apiSecret(wrong))
        let auth = try await client.verifyAuth()
        XCTAssertFalse(auth.isAuthenticated)
        do {
            try await client.upload(entries: [Entry(common: CommonFields(date: NightscoutDate(epochMilliseconds: simMillis(-30 * 86_400))),
                                                    type: .sgv, sgv: 1)])
            XCTFail("expected 401")
        } catch let error as NightscoutError {
            XCTAssertEqual(error.status, 401)
            guard case .unauthorized = error else { return XCTFail("\(error)") }
            XCTAssertFalse(error.isRetryable)
            let text = String(describing: error) + "\(client)"
            XCTAssertFalse(text.contains(wrong))
            XCTAssertFalse(text.contains(NightscoutCredentials.sha1Hex(wrong)))
        }
    }

    func testResponseBodyLimit() async throws {
        let client = try await h.client(.apiSecret(ClientSimHarness.secret), maximumResponseBytes: 64)
        do {
            _ = try await client.status()
            XCTFail("expected a transport error")
        } catch let error as NightscoutError {
            guard case .transport(let text) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(text.contains("exceeds 64 bytes"), text)
            XCTAssertTrue(error.isRetryable)
        }
    }
}
