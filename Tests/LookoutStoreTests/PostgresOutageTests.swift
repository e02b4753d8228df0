import Foundation
import LookoutConfig
import LookoutTestSupport
import NightscoutKit
import XCTest

@testable import LookoutStore

/// The PostgreSQL server goes away mid-run and comes back: store calls fail with a retryable
/// `StateStoreError` meanwhile (scripts see `nil, err`), a reservation throws (the guard refuses:
/// it cannot record), nothing queued is lost, and the same store works again once the server is
/// back (the pool reconnects by itself).
final class PostgresOutageTests: XCTestCase {
    func testServerRestartMidRun() async throws {
        let cluster = try PostgresTestCluster.forTest()
        let location = try PostgresLocation.parse(try cluster.createDatabase())
        let store = try await PostgresStateStore.open(location: location, password: cluster.adminPassword, timeout: .seconds(2))
        defer { store.close() }
        let now = StateBackendBehaviour.now
        _ = try await store.insertNotification(StateBackendBehaviour.message("queued"), now: now)
        try await store.setValue(Array("1".utf8), script: "a.lua", key: "k", quota: nil)

        try cluster.stopServer()
        var restarted = false
        defer { if !restarted { try? cluster.startServer() } }
        do {
            _ = try await store.value(script: "a.lua", key: "k")
            XCTFail("a read succeeded with the server down")
        } catch {
            XCTAssertTrue(error.retryable, "\(error)")
            XCTAssertTrue(error.description.contains(location.description), error.description)
        }
        do {
            _ = try await StateBackendBehaviour.reserveBolus(store, site: "https://ns.example", units: 1, budget: 4, at: now)
            XCTFail("a reservation succeeded with the server down")
        } catch {
            XCTAssertTrue(error is StateStoreError, "\(error)")
        }

        try cluster.startServer()
        restarted = true
        let deadline = Date(timeIntervalSinceNow: 30)
        var value: [UInt8]?
        while value == nil, Date() < deadline {
            value = try? await store.value(script: "a.lua", key: "k")
        }
        XCTAssertEqual(value, Array("1".utf8), "the store works again once the server is back")
        let queued = try await store.notification(id: "queued")
        XCTAssertEqual(queued?.state, .pending, "nothing queued was lost")
        let allowed = try await StateBackendBehaviour.reserveBolus(store, site: "https://ns.example", units: 1, budget: 4, at: now)
        XCTAssertTrue(allowed)
        let entries = try await store.auditEntries(site: nil, limit: 10)
        XCTAssertEqual(entries.count, 1, "the reservation refused during the outage left no entry")
    }
}
