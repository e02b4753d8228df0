import Foundation

/// An instant read from an ISO-8601 / RFC 3339 text by ``ISO8601``.
public struct ISO8601Timestamp: Sendable, Hashable {
    /// Whole seconds since 1970-01-01T00:00:00Z.
    public var epochSeconds: Int64
    /// The fraction of the second in nanoseconds (digits past the ninth are dropped).
    public var nanoseconds: Int
    /// The UTC offset written in the text, in minutes (`nil` when the text had none: read as UTC).
    public var offsetMinutes: Int?

    /// Creates a timestamp.
    public init(epochSeconds: Int64, nanoseconds: Int = 0, offsetMinutes: Int? = nil) {
        self.epochSeconds = epochSeconds
        self.nanoseconds = nanoseconds
        self.offsetMinutes = offsetMinutes
    }

    /// Milliseconds since the epoch (the fraction truncated to milliseconds).
    public var epochMilliseconds: Int64 { epochSeconds * 1000 + Int64(nanoseconds / 1_000_000) }

    /// The instant as a Foundation `Date`.
    public var date: Date { Date(timeIntervalSince1970: Double(epochSeconds) + Double(nanoseconds) / 1e9) }
}
