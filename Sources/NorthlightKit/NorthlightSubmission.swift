import Foundation

/// A feedback item or bug report, validated and encoded, ready to send (and to send again: the
/// body is exactly what the API receives). `NorthlightClient.send(_:)` sends it.
public struct NorthlightSubmission: Sendable, Equatable {
    /// Which endpoint takes it.
    public enum Kind: String, Sendable, CaseIterable {
        /// `POST /feedback`, answered with `feedback_id`.
        case feedback
        /// `POST /bugs`, answered with `bug_id`.
        case bug

        /// The endpoint path.
        public var path: String { self == .feedback ? "/feedback" : "/bugs" }
        /// The id field of the answer.
        var idField: String { self == .feedback ? "feedback_id" : "bug_id" }
    }

    /// The endpoint.
    public var kind: Kind
    /// The JSON body.
    public var body: Data

    /// A submission from a stored body (an outbox re-send).
    public init(kind: Kind, body: Data) {
        self.kind = kind
        self.body = body
    }
}

/// `POST /feedback` body (seed §API 1).
struct FeedbackBody: Encodable {
    var title: String
    var description: String
    var category: String?
    var userEmail: String?
    var deviceInfo: DeviceInfo

    enum CodingKeys: String, CodingKey {
        case title, description, category
        case userEmail = "user_email"
        case deviceInfo = "device_info"
    }
}

/// `POST /bugs` body (seed §API 2).
struct BugBody: Encodable {
    var title: String
    var description: String
    var severity: NorthlightSeverity
    var stepsToReproduce: String?
    var userEmail: String?
    var deviceInfo: DeviceInfo

    enum CodingKeys: String, CodingKey {
        case title, description, severity
        case stepsToReproduce = "steps_to_reproduce"
        case userEmail = "user_email"
        case deviceInfo = "device_info"
    }
}

/// `POST /feedback/{id}/vote` body (seed §API 3).
struct VoteBody: Encodable {
    var userIdentifier: String
    enum CodingKeys: String, CodingKey { case userIdentifier = "user_identifier" }
}
