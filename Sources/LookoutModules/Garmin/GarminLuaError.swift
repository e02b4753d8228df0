import GarminKit
import Lua

extension LuaErrorInfo {
    /// How scripts see a GarminKit failure: `err.service == "garmin"`, `err.code` (also in
    /// `err.kind`) one of `auth`, `mfa_required`, `rate_limited` (with `err.retry_after` when the
    /// server sent one), `http` (`err.status`), `network`, `invalid_response`, `invalid`, `config`.
    /// GarminKit's texts never contain a password, token or ticket.
    static func garmin(_ error: any Error) -> LuaErrorInfo {
        guard let error = error as? GarminError else {
            var info = LuaErrorInfo(error)
            info.service = info.service ?? "garmin"
            return info
        }
        var details: [String: LuaValue] = [:]
        if let after = error.retryAfter { details["retry_after"] = .double(after) }
        let code: String
        switch error {
        case .invalidCredentials, .notAuthenticated, .oauth1Invalid, .sso, .missingCSRF, .unexpectedTitle, .missingTicket,
            .mfaCodeInvalid:
            code = "auth"
        case .http(401, _, _), .http(403, _, _): code = "auth"
        case .mfaRequired: code = "mfa_required"
        case .rateLimited: code = "rate_limited"
        case .http: code = "http"
        case .transport: code = "network"
        case .decoding: code = "invalid_response"
        case .invalidConfiguration: code = "invalid"
        case .tokenStore: code = "config"
        }
        details["kind"] = .text(code)
        let message = error.description.hasPrefix("Garmin: ") ? String(error.description.dropFirst(8)) : error.description
        return LuaErrorInfo(
            code: code, message: message, retryable: error.isRetryable, status: error.status, service: "garmin", details: details)
    }
}
