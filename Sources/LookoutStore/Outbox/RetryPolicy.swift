import Foundation
import LookoutWire
import NightscoutKit

extension RetryPolicy {
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
