import Foundation
import NightscoutKit

/// When to try an upload again: exponential backoff with jitter, the server's `Retry-After`
/// when it gives one, and no retry for answers that cannot change.
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
    /// `retryAfter`. `random` is a number in 0..<1.
    public func delay(afterAttempts attempts: Int, retryAfter: TimeInterval?, random: Double) -> TimeInterval {
        let exponent = Double(max(0, attempts - 1))
        let base = min(maximumDelay, initialDelay * pow(multiplier, exponent))
        let spread = base * jitter * (2 * random - 1)
        return max(retryAfter ?? 0, max(0, base + spread))
    }

    /// Whether an error means "try later" (network, timeout, 408, 429, 5xx, a login backoff)
    /// rather than "this cannot succeed" (400, 401 after the token was renewed, 403, 404, 413,
    /// 422, a body the server rejects).
    public static func isRetryable(_ error: any Error) -> Bool {
        if let other = error as? OutboxSendError { return other.retryable }
        guard let error = error as? NightscoutError else { return !(error is CancellationError) }
        switch error {
        // A 2xx answer that cannot be read was probably stored: re-sending is safe (same identifier).
        case .transport, .temporarilyUnavailable, .authenticationBackoff, .decoding: return true
        case .http(let status, _): return status == 408 || status >= 500
        case .unauthorized, .unsupportedCredentials, .invalidRequest: return false
        }
    }
}
