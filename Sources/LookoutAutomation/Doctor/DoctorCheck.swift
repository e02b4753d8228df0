/// One finding of `lookout doctor`.
public struct DoctorCheck: Sendable, Codable, Equatable {
    /// How a check came out.
    public enum Status: String, Sendable, Codable, Comparable {
        case ok, warning, failure, skipped

        private var rank: Int { [.skipped: 0, .ok: 1, .warning: 2, .failure: 3][self]! }
        public static func < (a: Status, b: Status) -> Bool { a.rank < b.rank }
    }

    /// What was checked: `config`, `state`, `outbox`, `nightscout.home`, `signalk.boat`, …
    public var subject: String
    /// How the check came out.
    public var status: Status
    /// One line in plain words, never containing a secret.
    public var detail: String

    /// Creates a finding.
    public init(_ subject: String, _ status: Status, _ detail: String) {
        self.subject = subject
        self.status = status
        self.detail = detail
    }
}
