import Foundation

/// When to try a request again: exponential backoff with jitter, at least the server's
/// `Retry-After` when it gives one, but never longer than ``maximumDelay`` (a hostile or broken
/// server's `Retry-After: Wed, 21 Oct 2099 …` would otherwise park an item for decades). Which failures are worth retrying is the caller's (each Kit
/// classifies its own errors, e.g. NightscoutKit's `RetryPolicy.isRetryable`).
public struct RetryPolicy: Sendable, Equatable {
    /// The wait after the first failure (default 2 s).
    public var initialDelay: TimeInterval
    /// The longest wait between attempts (default 10 min).
    public var maximumDelay: TimeInterval
    /// The growth per attempt (default 2).
    public var multiplier: Double
    /// The random spread, as a fraction of the delay (default 0.2: ±20 %).
    public var jitter: Double

    /// A policy; the defaults suit a phone-tethered uploader on a flaky network.
    public init(initialDelay: TimeInterval = 2, maximumDelay: TimeInterval = 600, multiplier: Double = 2, jitter: Double = 0.2) {
        self.initialDelay = initialDelay; self.maximumDelay = maximumDelay; self.multiplier = multiplier; self.jitter = jitter
    }

    /// The wait before attempt `attempts + 1`, after `attempts` failures, at least the server's
    /// `retryAfter` up to ``maximumDelay`` (a longer `retryAfter` waits ``maximumDelay``).
    /// `random` is a number in 0..<1.
    public func delay(afterAttempts attempts: Int, retryAfter: TimeInterval?, random: Double) -> TimeInterval {
        let exponent = Double(max(0, attempts - 1))
        let base = min(maximumDelay, initialDelay * pow(multiplier, exponent))
        let spread = base * jitter * (2 * random - 1)
        let server = min(max(retryAfter ?? 0, 0), maximumDelay)  // NaN becomes 0
        return max(server.isNaN ? 0 : server, max(0, base + spread))
    }
}
