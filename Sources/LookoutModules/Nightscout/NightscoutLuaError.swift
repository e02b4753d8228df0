import Lua
import NightscoutKit

extension LuaErrorInfo {
    /// How scripts see a NightscoutKit failure: `err.service == "nightscout"`, a code (`auth`,
    /// `http`, `network`, `timeout`, `invalid_response`, `unsupported`, `invalid`), the status,
    /// whether retrying may help, and `err.retry_after` (seconds) when the server asked for a
    /// wait. No text contains a credential (NightscoutKit never puts one in an error).
    static func nightscout(_ error: any Error) -> LuaErrorInfo {
        if let error = error as? RemoteCommandsError {
            return LuaErrorInfo(code: error == .notSupported ? "unsupported" : "invalid_response", message: error.description,
                                service: "nightscout")
        }
        guard let error = error as? NightscoutError else {
            var info = LuaErrorInfo(error)
            info.service = info.service ?? "nightscout"
            return info
        }
        var details: [String: LuaValue] = [:]
        if let after = error.retryAfter { details["retry_after"] = .double(after) }
        let code: String, message: String
        switch error {
        case .unauthorized(let m):
            code = "auth"; message = "unauthorized (\(m))"
        case .authenticationBackoff(let after):
            code = "auth"; message = "login failed recently; the server allows a new attempt in \(Int(after.rounded(.up))) s"
        case .http(403, let body):
            code = "auth"; message = "forbidden: the credentials lack a permission" + (body.isEmpty ? "" : " (\(body))")
        case .http(let status, let body):
            code = "http"; message = body.isEmpty ? "HTTP \(status)" : body
        case .temporarilyUnavailable(_, let after, let body):
            code = "http"
            message = "temporarily unavailable" + (after.map { "; retry after \(Int($0.rounded(.up))) s" } ?? "")
                + (body.isEmpty ? "" : ": " + body)
        case .decoding(let m):
            code = "invalid_response"; message = "cannot decode the response: \(m)"
        case .unsupportedCredentials(let m):
            code = "unsupported"; message = m
        case .invalidRequest(let m):
            code = "invalid"; message = m
        case .transport(let m):
            code = m.contains("timed out") || m.contains("timeout") ? "timeout" : "network"; message = m
        }
        return LuaErrorInfo(code: code, message: message, retryable: error.isRetryable || error.retryAfter != nil && code == "auth",
                            status: error.status, service: "nightscout", details: details)
    }
}
