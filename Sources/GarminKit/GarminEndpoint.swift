import Foundation

/// A Connect API GET endpoint from the spec's list (§12): path and query.
public struct GarminEndpoint: Sendable, Equatable {
    /// Path under the Connect API base.
    public var path: String
    /// Query parameters in order.
    public var query: [String: String] { Dictionary(queryItems, uniquingKeysWith: { a, _ in a }) }
    /// Query parameters in order (as sent).
    public var queryItems: [(String, String)]

    /// Creates an endpoint.
    public init(path: String, query: [(String, String)] = []) { self.path = path; self.queryItems = query }

    /// Equality by path and query.
    public static func == (a: GarminEndpoint, b: GarminEndpoint) -> Bool {
        a.path == b.path && a.queryItems.map { [$0.0, $0.1] } == b.queryItems.map { [$0.0, $0.1] }
    }

    /// `/userprofile-service/socialProfile`.
    public static let profile = GarminEndpoint(path: "/userprofile-service/socialProfile")
    /// `/userprofile-service/userprofile/user-settings`.
    public static let userSettings = GarminEndpoint(path: "/userprofile-service/userprofile/user-settings")
    /// Daily summary of a date.
    public static func dailySummary(_ date: GarminDate) -> GarminEndpoint {
        GarminEndpoint(path: "/usersummary-service/usersummary/daily/", query: [("calendarDate", date.text)])
    }
    /// Heart rate of a date.
    public static func heartRate(_ date: GarminDate) -> GarminEndpoint {
        GarminEndpoint(path: "/wellness-service/wellness/dailyHeartRate/", query: [("date", date.text)])
    }
    /// Sleep of a date (`/sleep-service/sleep/dailySleepData`).
    public static func sleep(_ date: GarminDate) -> GarminEndpoint {
        GarminEndpoint(path: "/sleep-service/sleep/dailySleepData", query: [("date", date.text)])
    }
    /// Stress and body battery values of a date.
    public static func stress(_ date: GarminDate) -> GarminEndpoint {
        GarminEndpoint(path: "/wellness-service/wellness/dailyStress/\(date.text)")
    }
    /// Body battery events of a date.
    public static func bodyBattery(_ date: GarminDate) -> GarminEndpoint {
        GarminEndpoint(path: "/wellness-service/wellness/bodyBattery/events/\(date.text)")
    }
    /// Daily steps from `start` to `end` (at most 28 days).
    public static func steps(from start: GarminDate, to end: GarminDate) -> GarminEndpoint {
        GarminEndpoint(path: "/usersummary-service/stats/steps/daily/\(start.text)/\(end.text)")
    }
    /// HRV of a date (204 when there is none).
    public static func hrv(_ date: GarminDate) -> GarminEndpoint { GarminEndpoint(path: "/hrv-service/hrv/\(date.text)") }
    /// Weigh-ins of a date.
    public static func weight(_ date: GarminDate) -> GarminEndpoint {
        GarminEndpoint(path: "/weight-service/weight/dayview/\(date.text)")
    }
    /// Activities, newest first (`limit`, `start` offset).
    public static func activities(limit: Int = 20, start: Int = 0) -> GarminEndpoint {
        GarminEndpoint(
            path: "/activitylist-service/activities/search/activities", query: [("limit", String(limit)), ("start", String(start))])
    }
    /// One activity.
    public static func activity(_ id: Int64) -> GarminEndpoint { GarminEndpoint(path: "/activity-service/activity/\(id)") }
}

/// A calendar date `YYYY-MM-DD` (validated).
public struct GarminDate: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The text `YYYY-MM-DD`.
    public let text: String

    /// Parses `YYYY-MM-DD`; throws ``GarminError/invalidConfiguration(_:)`` naming the bad value.
    public init(_ text: String) throws {
        let ok = text.count == 10 && text.enumerated().allSatisfy { i, c in (i == 4 || i == 7) ? c == "-" : c.isASCII && c.isNumber }
        guard ok, Self.calendar.date(from: Self.components(text)) != nil,
            let m = Int(text.dropFirst(5).prefix(2)), (1...12).contains(m), let d = Int(text.suffix(2)), (1...31).contains(d)
        else { throw GarminError.invalidConfiguration("date must be YYYY-MM-DD, got \(text.prefix(40))") }
        self.text = text
    }

    /// The UTC calendar date of `date`.
    public init(_ date: Date) {
        let c = Self.calendar.dateComponents([.year, .month, .day], from: date)
        text = String(format: "%04d-%02d-%02d", c.year ?? 1970, c.month ?? 1, c.day ?? 1)
    }

    /// The date `days` later (negative: earlier).
    public func adding(days: Int) -> GarminDate {
        let d = Self.calendar.date(from: Self.components(text)) ?? Date()
        return GarminDate(d.addingTimeInterval(Double(days) * 86400))
    }

    /// Whole days from this date to `other` (negative when `other` is earlier).
    public func days(to other: GarminDate) -> Int {
        let a = Self.calendar.date(from: Self.components(text)) ?? Date()
        let b = Self.calendar.date(from: Self.components(other.text)) ?? Date()
        return Int((b.timeIntervalSince(a) / 86400).rounded())
    }

    /// `YYYY-MM-DD`.
    public var description: String { text }

    static var calendar: Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: "UTC")!
        return c
    }
    static func components(_ text: String) -> DateComponents {
        DateComponents(year: Int(text.prefix(4)), month: Int(text.dropFirst(5).prefix(2)), day: Int(text.suffix(2)), hour: 12)
    }
}
