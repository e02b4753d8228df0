import Foundation

/// The schedules of a profile.
public enum ProfileScheduleKind: String, Sendable, CaseIterable {
    /// `basal` (U/h).
    case basal
    /// `carbratio` (g/U).
    case carbratio
    /// `sens` (insulin sensitivity).
    case sens
    /// `target_low`.
    case targetLow = "target_low"
    /// `target_high`.
    case targetHigh = "target_high"
}

extension Profile {
    /// The items of a schedule.
    public func schedule(_ kind: ProfileScheduleKind) -> [ScheduleItem] {
        switch kind {
        case .basal: return basal
        case .carbratio: return carbratio
        case .sens: return sens
        case .targetLow: return targetLow
        case .targetHigh: return targetHigh
        }
    }

    /// The profile's time zone. Names are matched exactly, then case-insensitively (Loop writes
    /// `ETC/GMT+5`); `nil` when missing or unknown.
    public var timeZone: TimeZone? {
        guard let name = timezone, !name.isEmpty else { return nil }
        if let tz = TimeZone(identifier: name) { return tz }
        let lower = name.lowercased()
        // POSIX-style `Etc/GMT+5` means UTC−5 (sign inverted); resolve it even where the
        // platform's zone list omits the `Etc` area.
        if lower.hasPrefix("etc/gmt") || lower.hasPrefix("etc/utc") {
            let rest = lower.dropFirst(7)
            if rest.isEmpty || rest == "0" || rest == "+0" || rest == "-0" { return TimeZone(identifier: "UTC") }
            if let hours = Int(rest), abs(hours) <= 14 { return TimeZone(secondsFromGMT: -hours * 3600) }
        }
        if let match = TimeZone.knownTimeZoneIdentifiers.first(where: { $0.lowercased() == lower }) {
            return TimeZone(identifier: match)
        }
        return nil
    }

    /// The value of `kind` in force at `instant`, reading the schedule in the profile's time zone
    /// (`fallback`, default UTC, when the profile has none).
    public func value(_ kind: ProfileScheduleKind, at instant: Date, fallback: TimeZone = TimeZone(identifier: "UTC")!) -> Double? {
        ProfileSchedule.value(in: schedule(kind), at: instant, timeZone: timeZone ?? fallback)
    }
}

/// Schedule lookup.
public enum ProfileSchedule {
    /// The local wall-clock time of `instant` in `timeZone`, as seconds after midnight. This is
    /// the wall clock (hours × 3600 + minutes × 60 + seconds), not elapsed time since midnight, so
    /// schedule steps follow the clock on DST change days.
    public static func secondsSinceLocalMidnight(_ instant: Date, timeZone: TimeZone) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.hour, .minute, .second], from: instant)
        return (c.hour ?? 0) * 3600 + (c.minute ?? 0) * 60 + (c.second ?? 0)
    }

    /// The value in force at `instant`: the item with the greatest start ≤ the local wall-clock
    /// time; before the first start, the last item of the day (schedules wrap). `nil` when empty.
    public static func value(in items: [ScheduleItem], at instant: Date, timeZone: TimeZone) -> Double? {
        let sorted = items.compactMap { item in item.startSeconds.map { ($0, item.value) } }.sorted { $0.0 < $1.0 }
        guard let last = sorted.last else { return nil }
        let t = secondsSinceLocalMidnight(instant, timeZone: timeZone)
        return sorted.last(where: { $0.0 <= t })?.1 ?? last.1
    }
}
