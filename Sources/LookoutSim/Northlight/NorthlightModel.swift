import Foundation
import LookoutWire

/// The Northlight simulator's data: projects by API key, each with its tier, public board,
/// roadmap, bug reports, votes and rate-limit window. Shares no code with NorthlightKit.
struct NorthlightProject: Sendable {
    var tier: NorthlightSimulator.Tier
    var feedback: [NorthlightFeedbackRecord] = []
    var bugs: [JSONValue] = []
    var roadmap: [JSONValue] = []
    /// Items submitted through the API (the free tier's limit counts these).
    var submitted = 0
    /// Start of the current one-minute window and requests in it.
    var windowStart: Date?
    var windowCount = 0
}

/// One feedback item on a board.
struct NorthlightFeedbackRecord: Sendable {
    var id: String
    var title: String
    var description: String
    var status: String
    var category: String?
    var voters: Set<String> = []
    var baseVotes: Int
    var createdAt: String
    var userEmail: String?
    var deviceInfo: JSONValue?

    var voteCount: Int { baseVotes + voters.count }

    /// As `GET /feedback` lists it.
    var publicJSON: JSONValue {
        var o: [String: JSONValue] = [
            "id": .string(id), "title": .string(title), "description": .string(description), "status": .string(status),
            "vote_count": .int(Int64(voteCount)), "created_at": .string(createdAt),
        ]
        o["category"] = category.map(JSONValue.string) ?? .null
        return .object(o)
    }
}

/// Everything the simulator holds.
actor NorthlightSimState {
    var projects: [String: NorthlightProject] = [:]
    var failures: [(status: Int, headers: [(String, String)])] = []
    var requests: [NorthlightSimulator.RecordedRequest] = []

    func add(key: String, project: NorthlightProject) { projects[key] = project }
    func record(_ r: NorthlightSimulator.RecordedRequest) { requests.append(r) }
    func nextFailure() -> (status: Int, headers: [(String, String)])? { failures.isEmpty ? nil : failures.removeFirst() }
    func inject(_ status: Int, headers: [(String, String)] = [], count: Int) {
        failures += Array(repeating: (status, headers), count: count)
    }

    /// Runs `body` on a project (nil when the key is unknown).
    func with<T: Sendable>(_ key: String, _ body: (inout NorthlightProject) -> T) -> T? {
        guard var project = projects[key] else { return nil }
        let result = body(&project)
        projects[key] = project
        return result
    }
}

/// Sample data for a new project's board and roadmap.
enum NorthlightSeedData {
    static func board(now: Date) -> [NorthlightFeedbackRecord] {
        let created = ISO8601DateFormatter().string(from: now.addingTimeInterval(-86_400 * 7))
        return [
            NorthlightFeedbackRecord(id: "c0ffee00-0000-4000-8000-000000000001", title: "Dark mode",
                                     description: "A dark theme for night watches.", status: "approved", category: "UI/UX",
                                     baseVotes: 12, createdAt: created),
            NorthlightFeedbackRecord(id: "c0ffee00-0000-4000-8000-000000000002", title: "Export to CSV",
                                     description: "Download readings as CSV.", status: "suggested", category: "Data",
                                     baseVotes: 5, createdAt: created),
            NorthlightFeedbackRecord(id: "c0ffee00-0000-4000-8000-000000000003", title: "Offline maps",
                                     description: "Charts without a connection.", status: "completed", category: nil,
                                     baseVotes: 30, createdAt: created),
        ]
    }

    static let roadmap: [JSONValue] = [
        ["id": "d0d0d0d0-0000-4000-8000-000000000001", "feature": ["title": "Dark mode", "description": "A dark theme."],
         "position": 1, "estimated_date": "2024-Q2"],
        ["id": "d0d0d0d0-0000-4000-8000-000000000002", "feature": ["title": "Widgets", "description": "Home-screen widgets."],
         "position": 2, "estimated_date": "2024-Q3"],
        ["id": "d0d0d0d0-0000-4000-8000-000000000003", "feature": ["title": "Watch app", "description": "On the wrist."],
         "position": 3, "estimated_date": .null],
    ]
}
