import Foundation
import LookoutSim
import NorthlightKit
import XCTest

/// Every operation against the simulator, with the seed's headers and bodies.
final class NorthlightOperationTests: XCTestCase {
    private var site: NorthlightKitSim.Running!

    override func setUp() async throws { site = try await NorthlightKitSim.shared.start() }

    private func client(_ tier: NorthlightSimulator.Tier = .starter) async throws -> (NorthlightClient, String) {
        let key = await site.sim.addProject(tier: tier)
        let configuration = try NorthlightConfiguration(apiKey: key, baseURL: site.url, appVersion: "9.9.9")
        return (NorthlightClient(configuration: configuration, deviceInfo: { fixedDevice }), key)
    }

    private func lastRequest(key: String) async -> NorthlightSimulator.RecordedRequest? {
        await site.sim.requests().last { $0.headers["x-api-key"] == key }
    }

    func testSubmitFeedbackSendsTheSeedBodyAndHeaders() async throws {
        let (northlight, key) = try await client()
        try await northlight.setUserEmail("user@example.com")
        let id = try await northlight.submitFeedback(title: "Add dark mode support", description: "It would be great…", category: "UI/UX")
        XCTAssertEqual(id.count, 36)

        let recorded = await lastRequest(key: key)
        let request = try XCTUnwrap(recorded)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.target, "/api/v1/feedback")
        XCTAssertEqual(request.headers["x-platform"], NorthlightConfiguration.hostPlatform)
        XCTAssertEqual(request.headers["content-type"], "application/json")
        XCTAssertEqual(jsonKeys(request.body), ["title", "description", "category", "user_email", "device_info"])
        let body = jsonObject(request.body)
        XCTAssertEqual(body["user_email"] as? String, "user@example.com")
        let device = try XCTUnwrap(body["device_info"] as? [String: Any])
        XCTAssertEqual(Set(device.keys), ["model", "os_version", "app_version", "screen_resolution", "locale"])
        XCTAssertEqual(device["app_version"] as? String, "9.9.9")

        let board = try await northlight.publicFeedback(status: ["suggested"])
        let mine = try XCTUnwrap(board.first { $0.id == id })
        XCTAssertEqual(mine.title, "Add dark mode support")
        XCTAssertEqual(mine.category, "UI/UX")
        XCTAssertEqual(mine.voteCount, 0)
        let stored = await site.sim.submission(apiKey: key, id: id)
        XCTAssertEqual(stored?.email, "user@example.com")
    }

    func testEmailPerCallOverridesAndFeedbackWithoutOptionals() async throws {
        let (northlight, key) = try await client()
        try await northlight.setUserEmail("set@example.com")
        let id = try await northlight.submitFeedback(title: "t", description: "d", email: "other@example.org")
        let stored = await site.sim.submission(apiKey: key, id: id)
        XCTAssertEqual(stored?.email, "other@example.org")
        try await northlight.setUserEmail(nil)
        _ = try await northlight.submitFeedback(title: "t", description: "d")
        let recorded = await lastRequest(key: key)
        let request = try XCTUnwrap(recorded)
        XCTAssertEqual(jsonKeys(request.body), ["title", "description", "device_info"])
    }

    func testReportBugWithDefaultAndGivenSeverity() async throws {
        let (northlight, key) = try await client()
        let id = try await northlight.reportBug(title: "App crashes on login", description: "When I tap login…",
                                                stepsToReproduce: "1. Open app\n2. Tap login")
        XCTAssertEqual(id.count, 36)
        let recorded = await lastRequest(key: key)
        let request = try XCTUnwrap(recorded)
        XCTAssertEqual(request.target, "/api/v1/bugs")
        XCTAssertEqual(jsonKeys(request.body), ["title", "description", "severity", "steps_to_reproduce", "device_info"])
        let body = jsonObject(request.body)
        XCTAssertEqual(body["severity"] as? String, "medium")
        let device = try XCTUnwrap(body["device_info"] as? [String: Any])
        XCTAssertEqual(Set(device.keys), ["model", "os_version", "app_version", "screen_resolution", "locale", "free_memory",
                                          "battery_level", "network_type"])
        XCTAssertEqual(device["battery_level"] as? Double, 0.75)

        _ = try await northlight.reportBug(title: "Data loss", description: "Gone", severity: .critical)
        let bugs = await site.sim.bugs(apiKey: key)
        XCTAssertEqual(bugs.map { $0["severity"]?.stringValue }, ["medium", "critical"])
        XCTAssertEqual(bugs.first?["id"]?.stringValue, id)
    }

    func testVoteCountsOncePerUser() async throws {
        let (northlight, _) = try await client()
        let board = try await northlight.publicFeedback(status: ["approved"])
        let item = try XCTUnwrap(board.first)
        try await northlight.setUserIdentifier("user-a")
        let first = try await northlight.vote(feedbackID: item.id)
        XCTAssertEqual(first, item.voteCount + 1)
        let again = try await northlight.vote(feedbackID: item.id)
        XCTAssertEqual(again, first, "a second vote by the same user does not count")
        let other = try await northlight.vote(feedbackID: item.id, userIdentifier: "user-b")
        XCTAssertEqual(other, first + 1)
        let refreshed = try await northlight.publicFeedback(status: ["approved"])
        XCTAssertEqual(refreshed.first { $0.id == item.id }?.voteCount, other, "a vote clears the cached board")
    }

    func testVoteNeedsAUserAndAKnownItem() async throws {
        let (northlight, _) = try await client()
        await assertThrows(.invalidInput("user_identifier: required (set one with setUserIdentifier or pass it)")) {
            try await northlight.vote(feedbackID: "c0ffee00-0000-4000-8000-000000000001")
        }
        let unknown = "00000000-0000-4000-8000-00000000dead"
        await assertThrows(.invalidInput("feedback_id: no feedback item \(unknown)")) {
            try await northlight.vote(feedbackID: unknown, userIdentifier: "u")
        }
        await assertThrows(.invalidInput("feedback_id: expected letters, digits, '-' or '_'")) {
            try await northlight.vote(feedbackID: "../roadmap", userIdentifier: "u")
        }
    }

    func testBoardFiltersByStatusAndRoadmapIsOrdered() async throws {
        let (northlight, key) = try await client()
        let all = try await northlight.publicFeedback()
        XCTAssertEqual(Set(all.map(\.status)), ["approved", "suggested", "completed"])
        XCTAssertEqual(all.map(\.voteCount), all.map(\.voteCount).sorted(by: >), "most voted first")
        let some = try await northlight.publicFeedback(status: ["approved", "suggested"])
        XCTAssertEqual(Set(some.map(\.status)), ["approved", "suggested"])
        let target = await lastRequest(key: key)?.target
        XCTAssertEqual(target, "/api/v1/feedback?status=approved,suggested")
        await assertThrows(.invalidInput("status: unknown status bogus")) { try await northlight.publicFeedback(status: ["bogus"]) }

        let roadmap = try await northlight.roadmap()
        XCTAssertEqual(roadmap.map(\.position), [1, 2, 3])
        XCTAssertEqual(roadmap.first?.feature.title, "Dark mode")
        XCTAssertEqual(roadmap.first?.estimatedDate, "2024-Q2")
        XCTAssertNil(roadmap.last?.estimatedDate)
    }
}

/// The seed's facade over one client.
final class NorthlightFacadeTests: XCTestCase {
    func testConfigureSharedAndForwarding() async throws {
        let site = try await NorthlightKitSim.shared.start()
        Northlight.use(nil)
        await assertThrows(.invalidAPIKey) { try await Northlight.submitFeedback(title: "t", description: "d") }
        let key = await site.sim.addProject(tier: .starter)
        let client = try Northlight.configure(apiKey: key, baseURL: site.url, appVersion: "2.0")
        XCTAssertTrue(try Northlight.shared() === client)
        try await Northlight.shared().setUserIdentifier("facade-user")
        let id = try await Northlight.submitFeedback(title: "From the facade", description: "d", category: "UI/UX")
        let bug = try await Northlight.reportBug(title: "Bug", description: "d", severity: .high, stepsToReproduce: "1.")
        XCTAssertEqual(bug.count, 36)
        let votes = try await Northlight.vote(feedbackId: id)
        XCTAssertEqual(votes, 1)
        Northlight.use(nil)
    }
}
