import Foundation

/// One item of the public board (`GET /feedback`).
public struct PublicFeedback: Sendable, Equatable, Codable {
    /// The feedback id (votes use it).
    public var id: String
    /// Title.
    public var title: String
    /// Description.
    public var description: String
    /// Status (`approved`, `suggested`, …).
    public var status: String
    /// Category, when the item has one.
    public var category: String?
    /// Votes so far.
    public var voteCount: Int
    /// When it was created (ISO 8601 text as the server sent it).
    public var createdAt: String

    enum CodingKeys: String, CodingKey {
        case id, title, description, status, category
        case voteCount = "vote_count"
        case createdAt = "created_at"
    }

    /// An item (for tests and Swift users building their own boards).
    public init(id: String, title: String, description: String, status: String, category: String?, voteCount: Int, createdAt: String) {
        self.id = id; self.title = title; self.description = description; self.status = status
        self.category = category; self.voteCount = voteCount; self.createdAt = createdAt
    }
}

/// One item of the public roadmap (`GET /roadmap`).
public struct RoadmapItem: Sendable, Equatable, Codable {
    /// The planned feature.
    public struct Feature: Sendable, Equatable, Codable {
        /// Title.
        public var title: String
        /// Description.
        public var description: String
    }

    /// The roadmap item's id.
    public var id: String
    /// The feature.
    public var feature: Feature
    /// Order on the roadmap (1 first).
    public var position: Int
    /// A rough date such as `2024-Q2`, when given.
    public var estimatedDate: String?

    enum CodingKeys: String, CodingKey {
        case id, feature, position
        case estimatedDate = "estimated_date"
    }
}

/// Answers of the read endpoints.
struct BoardResponse: Decodable { var feedback: [PublicFeedback] }
struct RoadmapResponse: Decodable {
    var roadmapItems: [RoadmapItem]
    enum CodingKeys: String, CodingKey { case roadmapItems = "roadmap_items" }
}
