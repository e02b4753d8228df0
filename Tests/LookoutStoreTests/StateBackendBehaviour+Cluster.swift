import Foundation
import NightscoutKit
import XCTest

@testable import LookoutStore

/// The cluster leases (`serve --cluster`), on both backends.
extension StateBackendBehaviour {
    static func instance(_ id: String) -> ClusterInstance {
        ClusterInstance(id: id, host: "test", pid: 1, startedAt: Date(), ttl: 60)
    }

    /// One holder at a time; a free or expired lease goes to the next taker with the next fencing
    /// number; a renewal needs the current fence; a release frees it at once.
    static func leasesHaveOneHolderAndGrowingFences(_ b: BackendUnderTest) async throws {
        let s = b.store
        let first = try await s.acquireLease(cluster: "c", work: "low.lua", instance: "a", ttl: 60)
        XCTAssertEqual(first, 1)
        let taken = try await s.acquireLease(cluster: "c", work: "low.lua", instance: "b", ttl: 60)
        XCTAssertNil(taken, "a held lease cannot be taken")
        let other = try await s.acquireLease(cluster: "c2", work: "low.lua", instance: "b", ttl: 60)
        XCTAssertEqual(other, 1, "clusters are separate")

        // a renews; b's heartbeat renews nothing of a's.
        let renewed = try await s.clusterHeartbeat(cluster: "c", instance: instance("a"), held: ["low.lua": 1], ttl: 60)
        XCTAssertEqual(renewed.renewed, ["low.lua": 1])
        let wrong = try await s.clusterHeartbeat(cluster: "c", instance: instance("b"), held: ["low.lua": 1], ttl: 60)
        XCTAssertEqual(wrong.renewed, [:])

        // Let it expire (a renewal with a lease already over), then b takes it with fence 2.
        _ = try await s.clusterHeartbeat(cluster: "c", instance: instance("a"), held: ["low.lua": 1], ttl: -1)
        let held1 = try await s.leaseIsHeld(LeaseFence(cluster: "c", work: "low.lua", instance: "a", fence: 1))
        XCTAssertFalse(held1, "an expired lease is not held")
        let second = try await s.acquireLease(cluster: "c", work: "low.lua", instance: "b", ttl: 60)
        XCTAssertEqual(second, 2)
        let late = try await s.clusterHeartbeat(cluster: "c", instance: instance("a"), held: ["low.lua": 1], ttl: 60)
        XCTAssertEqual(late.renewed, [:], "a woke up after its lease moved on: nothing renewed")
        let held2 = try await s.leaseIsHeld(LeaseFence(cluster: "c", work: "low.lua", instance: "b", fence: 2))
        XCTAssertTrue(held2)

        // A release with an old fence does nothing; with the current one it frees at once.
        try await s.releaseLease(cluster: "c", work: "low.lua", instance: "a", fence: 1, retire: false)
        let stillB = try await s.acquireLease(cluster: "c", work: "low.lua", instance: "a", ttl: 60)
        XCTAssertNil(stillB)
        try await s.releaseLease(cluster: "c", work: "low.lua", instance: "b", fence: 2, retire: false)
        let third = try await s.acquireLease(cluster: "c", work: "low.lua", instance: "a", ttl: 60)
        XCTAssertEqual(third, 3)

        // Retiring (the script left the folder) removes the lease; only its holder can.
        let gone = try await s.acquireLease(cluster: "c", work: "gone.lua", instance: "b", ttl: 60)
        try await s.releaseLease(cluster: "c", work: "gone.lua", instance: "a", fence: try XCTUnwrap(gone), retire: true)
        let kept = try await s.clusterView(cluster: "c")
        XCTAssertEqual(kept.held["gone.lua"]?.holder, "b", "another instance cannot retire it")
        try await s.releaseLease(cluster: "c", work: "gone.lua", instance: "b", fence: try XCTUnwrap(gone), retire: true)

        let view = try await s.clusterView(cluster: "c")
        XCTAssertEqual(view.leases.map(\.work), ["low.lua"])
        XCTAssertEqual(view.instances.map(\.id), ["a", "b"])
        XCTAssertEqual(view.held["low.lua"]?.holder, "a")
        XCTAssertEqual(view.live.count, 2)
        try await s.leaveCluster(cluster: "c", instance: "a")
        let left = try await s.clusterView(cluster: "c")
        XCTAssertEqual(left.instances.map(\.id), ["b"])
        XCTAssertNil(left.held["low.lua"], "leaving releases every lease")
    }

    /// Many instances race for the same free leases: each lease has exactly one winner.
    static func concurrentAcquisitionsHaveOneWinner(_ b: BackendUnderTest) async throws {
        let s = b.store
        let works = (0..<10).map { "site-\($0).lua" }
        let winners = try await withThrowingTaskGroup(of: (String, String)?.self) { group in
            for instance in ["a", "b", "c", "d"] {
                for work in works {
                    group.addTask {
                        try await s.acquireLease(cluster: "race", work: work, instance: instance, ttl: 60).map { _ in (work, instance) }
                    }
                }
            }
            var won: [(String, String)] = []
            for try await result in group { if let result { won.append(result) } }
            return won
        }
        XCTAssertEqual(winners.count, works.count, "one winner per lease: \(winners)")
        XCTAssertEqual(Set(winners.map(\.0)), Set(works))
    }

    /// A reservation under a lease that moved on is refused inside its transaction, appending nothing.
    static func fencedReservationNeedsTheLease(_ b: BackendUnderTest) async throws {
        let s = b.store
        let fence = try await s.acquireLease(cluster: "c", work: "bolus.lua", instance: "a", ttl: 60)
        let mine = LeaseFence(cluster: "c", work: "bolus.lua", instance: "a", fence: try XCTUnwrap(fence))
        let ledger = FencedLedger(store: s, fence: mine)
        let allowed = try await reserve(ledger, at: now)
        XCTAssertTrue(allowed)
        // The lease expires and b takes it: a's next reservation is refused by the database.
        _ = try await s.clusterHeartbeat(cluster: "c", instance: instance("a"), held: ["bolus.lua": mine.fence], ttl: -1)
        _ = try await s.acquireLease(cluster: "c", work: "bolus.lua", instance: "b", ttl: 60)
        do {
            _ = try await reserve(ledger, at: now + 60)
            XCTFail("reserved under a lost lease")
        } catch {
            XCTAssertEqual((error as? StateStoreError)?.code, "lease", "\(error)")
            XCTAssertTrue(String(describing: error).contains("no longer holds the lease of bolus.lua"), "\(error)")
        }
        let entries = try await s.auditEntries(site: nil, limit: 10)
        XCTAssertEqual(entries.count, 1, "nothing appended under the lost lease")
    }

    private static func reserve(_ ledger: FencedLedger, at time: Date) async throws -> Bool {
        try await ledger.reserve(site: "https://ns.example", keys: [], window: 3600, now: time) { _, now in
            (AuditEntry(ticketID: UUID(), time: now, site: "https://ns.example", command: bolus(1), source: "bolus.lua",
                        verdict: .allowed, phase: .attempted, detail: "bolus 1 U"), true)
        }
    }
}
