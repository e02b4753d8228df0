import Lua
import NorthlightKit

extension LuaErrorInfo {
    /// How scripts see a NorthlightKit failure: `err.service == "northlight"`, `err.code` the
    /// error's kind (`invalid_api_key`, `network`, `rate_limited`, `feedback_limit`,
    /// `invalid_input`, `server`, `invalid_response`), `err.field` for invalid input and
    /// `err.retry_after` (seconds) for a rate limit. No text contains the API key.
    static func northlight(_ error: any Error) -> LuaErrorInfo {
        guard let error = error as? NorthlightError else {
            var info = LuaErrorInfo(error)
            info.service = info.service ?? "northlight"
            return info
        }
        var details: [String: LuaValue] = [:]
        if let after = error.retryAfter { details["retry_after"] = .double(after) }
        if let field = error.field { details["field"] = .text(field) }
        return LuaErrorInfo(code: error.kind, message: error.description.replacingOccurrences(of: "Northlight: ", with: ""),
                            retryable: error.isRetryable, status: error.status, service: "northlight", details: details)
    }
}
