import Foundation
import LookoutSim
import NorthlightKit
import XCTest

/// The board and roadmap cache, on an injected clock (no sleeps).
final class NorthlightCacheTests: XCTestCase {
    func testBoardAndRoadmapAreCachedForTheirTimeToLive() async throws {
        let site = try await NorthlightKitSim.shared.start()
        let key = await site.sim.addProject(tier: .starter)
        let clock = SimulatedClock(Date(timeIntervalSince1970: 1_700_000_000))
        let configuration = try NorthlightConfiguration(apiKey: key, baseURL: site.url, cacheTTL: 300)
        let northlight = NorthlightClient(configuration: configuration, now: clock.now, deviceInfo: { fixedDevice })
        func gets(_ path: String) async -> Int {
            await site.sim.requests().filter { $0.headers["x-api-key"] == key && $0.method == "GET" && $0.target.hasPrefix(path) }.count
        }

        _ = try await northlight.publicFeedback(status: ["approved"])
        _ = try await northlight.roadmap()
        clock.advance(by: 299)
        _ = try await northlight.publicFeedback(status: ["approved"])
        _ = try await northlight.roadmap()
        var boardGets = await gets("/api/v1/feedback")
        var roadmapGets = await gets("/api/v1/roadmap")
        XCTAssertEqual(boardGets, 1, "answered from the cache within the TTL")
        XCTAssertEqual(roadmapGets, 1)

        _ = try await northlight.publicFeedback(status: ["suggested"])
        boardGets = await gets("/api/v1/feedback")
        XCTAssertEqual(boardGets, 2, "another filter is another entry")

        clock.advance(by: 2)
        _ = try await northlight.publicFeedback(status: ["approved"])
        _ = try await northlight.roadmap()
        boardGets = await gets("/api/v1/feedback")
        roadmapGets = await gets("/api/v1/roadmap")
        XCTAssertEqual(boardGets, 3, "expired after 300 s")
        XCTAssertEqual(roadmapGets, 2)

        _ = try await northlight.roadmap(refresh: true)
        roadmapGets = await gets("/api/v1/roadmap")
        XCTAssertEqual(roadmapGets, 3, "refresh skips the cache")

        _ = try await northlight.submitFeedback(title: "new", description: "d")
        let board = try await northlight.publicFeedback(status: ["suggested"])
        XCTAssertTrue(board.contains { $0.title == "new" }, "a submission clears the board cache")
    }

    func testZeroTTLDisablesTheCache() async throws {
        let site = try await NorthlightKitSim.shared.start()
        let key = await site.sim.addProject(tier: .starter)
        let northlight = NorthlightClient(configuration: try NorthlightConfiguration(apiKey: key, baseURL: site.url, cacheTTL: 0),
                                          deviceInfo: { fixedDevice })
        _ = try await northlight.roadmap()
        _ = try await northlight.roadmap()
        let count = await site.sim.requests().filter { $0.headers["x-api-key"] == key }.count
        XCTAssertEqual(count, 2)
    }
}
