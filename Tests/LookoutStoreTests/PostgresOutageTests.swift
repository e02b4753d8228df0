import Foundation
import LookoutConfig
import LookoutWire
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

    /// A call that waits for a row another session holds locked (an instance paused in the middle
    /// of its heartbeat, say) ends at the store's timeout with a retryable error, while the lock
    /// is still held: it neither waits for the other session nor hangs the caller.
    func testACallWaitingForALockEndsAtTheTimeout() async throws {
        let cluster = try PostgresTestCluster.forTest()
        let location = try PostgresLocation.parse(try cluster.createDatabase())
        let store = try await PostgresStateStore.open(location: location, password: cluster.adminPassword, timeout: .seconds(1))
        defer { store.close() }
        _ = try await store.acquireLease(cluster: "c", work: "w.lua", instance: "a", ttl: 0.001)
        // Another session (a store of its own, as another instance would have) locks the lease's
        // row in a transaction and keeps it until the end of the test.
        let other = try await PostgresStateStore.open(location: location, password: cluster.adminPassword, timeout: .seconds(120))
        defer { other.close() }
        let locked = Locked(false)
        let release = AsyncStream<Void>.makeStream()
        let locker = Task {
            try await other.transaction(timeout: .seconds(120)) { connection in
                try await other.execute("UPDATE cluster_leases SET expires_at = expires_at", on: connection)
                locked.withLock { $0 = true }
                for await _ in release.stream {}
            }
        }
        defer { release.continuation.finish() }
        let deadline = Date(timeIntervalSinceNow: 30)
        while !locked.withLock({ $0 }) {
            guard Date() < deadline else { return XCTFail("the other session never locked the row") }
            try await Task.sleep(for: .milliseconds(20))
        }

        // The call runs in its own task; the test waits for it at most 30 s, holding the lock.
        let outcome = Locked<Result<Int64?, StateStoreError>?>(nil)
        let call = Task {
            do throws(StateStoreError) {
                let fence = try await store.acquireLease(cluster: "c", work: "w.lua", instance: "b", ttl: 10)
                outcome.withLock { $0 = .success(fence) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
        }
        defer { call.cancel() }
        let waitUntil = Date(timeIntervalSinceNow: 30)
        while outcome.withLock({ $0 }) == nil, Date() < waitUntil { try await Task.sleep(for: .milliseconds(20)) }
        let result = outcome.withLock { $0 }
        release.continuation.finish()
        try await locker.value
        switch result {
        case nil: XCTFail("the call was still waiting for the lock after 30 s (its timeout is 1 s)")
        case .success(let fence): XCTFail("the lease was taken (fence \(String(describing: fence))) past another session's lock")
        case .failure(let error): XCTAssertTrue(error.retryable, "\(error)")
        }
    }
}
