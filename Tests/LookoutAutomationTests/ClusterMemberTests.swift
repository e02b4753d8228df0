import Foundation
import LookoutStore
import XCTest

@testable import LookoutAutomation

/// The balance of `serve --cluster`: members sharing one state database converge on an even
/// share, hand work over when one leaves, and take a share back when one joins (the leases are
/// real, in a SQLite file; the processes are in `ClusterServeTests`).
final class ClusterMemberTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "/lookout-cluster-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: folder) }

    private let work = (1...10).map { "site-\($0).lua" }

    private func member(_ id: String, _ store: StateStore) async -> ClusterMember {
        let member = ClusterMember(settings: ClusterSettings(name: "t", instance: id, ttl: 60), store: store, log: { _ in })
        await member.setWork(work)
        return member
    }

    /// What each member holds, by member.
    private func holdings(_ members: [ClusterMember]) async -> [[String]] {
        var result: [[String]] = []
        for member in members {
            var held: [String] = []
            for item in work { if await member.holding(item) != nil { held.append(item) } }
            result.append(held)
        }
        return result
    }

    func testMembersConvergeOnAnEvenShareAndHandOverWhenOneLeaves() async throws {
        let store = try StateStore(path: folder + "/lookout.sqlite3")
        let a = await member("a", store), b = await member("b", store), c = await member("c", store)
        // a alone takes everything.
        await a.tick()
        var held = await holdings([a])
        XCTAssertEqual(held[0].count, 10)
        // b and c join: a gives up all beyond ⌈10 / 3⌉ = 4, the others take up to their share.
        for _ in 0..<3 { for m in [b, c, a] { await m.tick() } }
        held = await holdings([a, b, c])
        XCTAssertEqual(held.map(\.count).reduce(0, +), 10, "\(held)")
        XCTAssertTrue(held.allSatisfy { $0.count >= 3 && $0.count <= 4 }, "even: \(held)")
        XCTAssertEqual(Set(held.flatMap { $0 }).count, 10, "no piece held twice: \(held)")
        // a leaves cleanly: b and c take its work at their next heartbeat.
        await a.leave()
        await a.workStopped("site-1.lua")
        for m in [b, c, b] { await m.tick() }
        held = await holdings([b, c])
        XCTAssertEqual(held.map(\.count).reduce(0, +), 10, "\(held)")
        XCTAssertTrue(held.allSatisfy { $0.count == 5 }, "\(held)")
    }

    func testPlanPrefersTheSameInstanceEveryTime() {
        let view = ClusterView(cluster: "t", now: Date(), instances: [], leases: [])
        let first = ClusterPlan.make(instance: "a", held: [], work: work, view: view, live: ["a", "b"])
        let again = ClusterPlan.make(instance: "a", held: [], work: work.reversed(), view: view, live: ["b", "a"])
        XCTAssertEqual(first, again, "the plan does not depend on the order things are listed in")
        XCTAssertEqual(first.acquire.count, 5)
        // Each piece prefers exactly one of the two, and each instance asks for its own first.
        let preferA = Set(work.filter { ClusterPlan.rank($0, "a", ["a", "b"]) == 0 })
        let preferB = Set(work.filter { ClusterPlan.rank($0, "b", ["a", "b"]) == 0 })
        XCTAssertEqual(preferA.union(preferB), Set(work))
        XCTAssertTrue(preferA.isDisjoint(with: preferB))
        let own = min(5, preferA.count)
        XCTAssertEqual(Set(first.acquire.prefix(own)), Set(preferA.sorted().prefix(own)), "a asks for what prefers it first")
    }
}
