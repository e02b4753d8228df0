import Foundation

/// Answers kept for a time to live, on an injected clock.
struct NorthlightCache<Value: Sendable>: Sendable {
    private var entries: [String: (stored: Date, value: Value)] = [:]

    /// The value for `key` if stored less than `ttl` seconds before `now`.
    func value(_ key: String, now: Date, ttl: TimeInterval) -> Value? {
        guard ttl > 0, let entry = entries[key] else { return nil }
        let age = now.timeIntervalSince(entry.stored)
        return age >= 0 && age < ttl ? entry.value : nil
    }

    /// Stores `value` at `now`.
    mutating func store(_ key: String, _ value: Value, now: Date) { entries[key] = (now, value) }

    /// Forgets everything.
    mutating func clear() { entries = [:] }
}
