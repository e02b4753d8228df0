import Foundation

/// `socialProfile` (key fields).
public struct GarminProfile: Decodable, Sendable, Equatable {
    /// `profileId`.
    public var profileId: Int64?
    /// `displayName`.
    public var displayName: String?
    /// `userName`.
    public var userName: String?
    /// `fullName`.
    public var fullName: String?
    /// `location`.
    public var location: String?
}

/// Daily summary (key fields).
public struct GarminDailySummary: Decodable, Sendable, Equatable {
    /// `calendarDate`.
    public var calendarDate: String?
    /// `totalSteps`.
    public var totalSteps: Int?
    /// `dailyStepGoal`.
    public var dailyStepGoal: Int?
    /// `totalDistanceMeters`.
    public var totalDistanceMeters: Double?
    /// `totalKilocalories`.
    public var totalKilocalories: Double?
    /// `restingHeartRate`.
    public var restingHeartRate: Int?
    /// `averageStressLevel`.
    public var averageStressLevel: Int?
    /// `bodyBatteryMostRecentValue`.
    public var bodyBatteryMostRecentValue: Int?
}

/// Daily heart rate: `heartRateValues` are `[epoch ms, bpm]` pairs (bpm may be null).
public struct GarminHeartRate: Decodable, Sendable, Equatable {
    /// `calendarDate`.
    public var calendarDate: String?
    /// `restingHeartRate`.
    public var restingHeartRate: Int?
    /// `minHeartRate`.
    public var minHeartRate: Int?
    /// `maxHeartRate`.
    public var maxHeartRate: Int?
    /// `heartRateValues`.
    public var heartRateValues: [[Double?]]?
}

/// Sleep (`dailySleepDTO` key fields).
public struct GarminSleep: Decodable, Sendable, Equatable {
    /// The `dailySleepDTO` object.
    public struct Daily: Decodable, Sendable, Equatable {
        /// `id` (null: no data).
        public var id: Int64?
        /// `calendarDate`.
        public var calendarDate: String?
        /// `sleepTimeSeconds`.
        public var sleepTimeSeconds: Int?
        /// `deepSleepSeconds`.
        public var deepSleepSeconds: Int?
        /// `lightSleepSeconds`.
        public var lightSleepSeconds: Int?
        /// `remSleepSeconds`.
        public var remSleepSeconds: Int?
        /// `awakeSleepSeconds`.
        public var awakeSleepSeconds: Int?
    }
    /// `dailySleepDTO`.
    public var dailySleepDTO: Daily?
}

/// Daily stress with body battery values.
public struct GarminStress: Decodable, Sendable, Equatable {
    /// `calendarDate`.
    public var calendarDate: String?
    /// `avgStressLevel`.
    public var avgStressLevel: Int?
    /// `maxStressLevel`.
    public var maxStressLevel: Int?
    /// `stressValuesArray`: `[epoch ms, level]`.
    public var stressValuesArray: [[Double?]]?
}

/// One body battery event.
public struct GarminBodyBatteryEvent: Decodable, Sendable, Equatable {
    /// The `event` object.
    public struct Event: Decodable, Sendable, Equatable {
        /// `eventType`.
        public var eventType: String?
        /// `bodyBatteryImpact`.
        public var bodyBatteryImpact: Int?
        /// `durationInMilliseconds`.
        public var durationInMilliseconds: Int64?
    }
    /// `event`.
    public var event: Event?
    /// `activityName`.
    public var activityName: String?
}

/// One day of the steps statistics.
public struct GarminDailySteps: Decodable, Sendable, Equatable {
    /// `calendarDate`.
    public var calendarDate: String
    /// `totalSteps`.
    public var totalSteps: Int?
    /// `totalDistance` in metres.
    public var totalDistance: Double?
    /// `stepGoal`.
    public var stepGoal: Int?
}

/// HRV of a night (key fields).
public struct GarminHRV: Decodable, Sendable, Equatable {
    /// `hrvSummary`.
    public struct Summary: Decodable, Sendable, Equatable {
        /// `calendarDate`.
        public var calendarDate: String?
        /// `weeklyAvg`.
        public var weeklyAvg: Int?
        /// `lastNightAvg`.
        public var lastNightAvg: Int?
        /// `status`.
        public var status: String?
    }
    /// `hrvSummary`.
    public var hrvSummary: Summary?
}

/// Weigh-ins of a day (weights in grams).
public struct GarminWeightDay: Decodable, Sendable, Equatable {
    /// One weigh-in.
    public struct Entry: Decodable, Sendable, Equatable {
        /// `samplePk`.
        public var samplePk: Int64?
        /// `calendarDate`.
        public var calendarDate: String?
        /// `weight` in grams.
        public var weight: Double?
        /// `bmi`.
        public var bmi: Double?
        /// `bodyFat` percent.
        public var bodyFat: Double?
    }
    /// `dateWeightList`.
    public var dateWeightList: [Entry]?
}

/// One activity of the list (key fields).
public struct GarminActivity: Decodable, Sendable, Equatable {
    /// The `activityType` object.
    public struct ActivityType: Decodable, Sendable, Equatable {
        /// `typeKey` (`running`, …).
        public var typeKey: String?
    }
    /// `activityId`.
    public var activityId: Int64
    /// `activityName`.
    public var activityName: String?
    /// `startTimeLocal`.
    public var startTimeLocal: String?
    /// `activityType`.
    public var activityType: ActivityType?
    /// `distance` in metres.
    public var distance: Double?
    /// `duration` in seconds.
    public var duration: Double?
}

extension GarminClient {
    /// The social profile.
    public func profile() async throws -> GarminProfile? { try await get(GarminEndpoint.profile, as: GarminProfile.self) }
    /// The daily summary of a date.
    public func dailySummary(date: GarminDate) async throws -> GarminDailySummary? {
        try await get(.dailySummary(date), as: GarminDailySummary.self)
    }
    /// Heart rate of a date.
    public func heartRate(date: GarminDate) async throws -> GarminHeartRate? { try await get(.heartRate(date), as: GarminHeartRate.self) }
    /// Sleep of a date (nil when `dailySleepDTO.id` is null).
    public func sleep(date: GarminDate) async throws -> GarminSleep? {
        let s = try await get(.sleep(date), as: GarminSleep.self)
        return s?.dailySleepDTO?.id == nil ? nil : s
    }
    /// Stress of a date (nil: no data).
    public func stress(date: GarminDate) async throws -> GarminStress? { try await get(.stress(date), as: GarminStress.self) }
    /// Body battery events of a date.
    public func bodyBattery(date: GarminDate) async throws -> [GarminBodyBatteryEvent] {
        try await get(.bodyBattery(date), as: [GarminBodyBatteryEvent].self) ?? []
    }
    /// Daily steps from `start` to `end`, ascending. Longer ranges are read in 28-day pages,
    /// newest first, stopping at the first empty page (garth's `stats` paging, spec §13).
    public func steps(from start: GarminDate, to end: GarminDate) async throws -> [GarminDailySteps] {
        guard start.days(to: end) >= 0 else { throw GarminError.invalidConfiguration("steps: \(end) is before \(start)") }
        var result: [GarminDailySteps] = []
        var pageEnd = end
        while start.days(to: pageEnd) >= 0 {
            let pageStart = start.days(to: pageEnd) >= 27 ? pageEnd.adding(days: -27) : start
            let page = try await get(.steps(from: pageStart, to: pageEnd), as: [GarminDailySteps].self) ?? []
            if page.isEmpty { break }
            result = page + result
            pageEnd = pageStart.adding(days: -1)
        }
        return result.sorted { $0.calendarDate < $1.calendarDate }
    }
    /// HRV of a date (nil: 204, no data).
    public func hrv(date: GarminDate) async throws -> GarminHRV? { try await get(.hrv(date), as: GarminHRV.self) }
    /// Weigh-ins of a date.
    public func weight(date: GarminDate) async throws -> GarminWeightDay? { try await get(.weight(date), as: GarminWeightDay.self) }
    /// Activities, newest first.
    public func activities(limit: Int = 20, start: Int = 0) async throws -> [GarminActivity] {
        try await get(.activities(limit: limit, start: start), as: [GarminActivity].self) ?? []
    }

    func get<T: Decodable & Sendable>(_ endpoint: GarminEndpoint, as type: T.Type) async throws -> T? {
        try await get(endpoint.path, query: endpoint.queryItems, as: type)
    }
}
