import Foundation
import LookoutStore
import Lua
import NightscoutKit

/// Outbox items as scripts see them.
enum OutboxLua {
    /// `{id, site, collection, state, attempts, created, source, error, status, next_attempt,
    /// sent_at, deduplicated}` (times in epoch ms).
    static func value(_ item: OutboxItem) -> LuaValue {
        func ms(_ date: Date) -> LuaValue { .int(Int64((date.timeIntervalSince1970 * 1000).rounded())) }
        var fields: [String: LuaValue] = [
            "id": .text(item.identifier), "site": .text(item.site), "collection": .text(item.collectionName),
            "state": .text(item.state.rawValue), "attempts": .int(Int64(item.attempts)), "created": ms(item.created),
        ]
        if let source = item.source { fields["source"] = .text(source) }
        if let error = item.lastError { fields["error"] = .text(error) }
        if let status = item.lastStatus { fields["status"] = .int(Int64(status)) }
        if item.state == .pending { fields["next_attempt"] = ms(item.nextAttempt) }
        if let sent = item.sentAt { fields["sent_at"] = ms(sent) }
        if let deduplicated = item.deduplicated { fields["deduplicated"] = .bool(deduplicated) }
        return .object(fields)
    }

    /// The error of an item the server refused for good (`err.outbox_id` names it).
    static func error(_ item: OutboxItem) -> LuaErrorInfo {
        let code = item.lastStatus == 401 || item.lastStatus == 403 ? "auth" : item.lastStatus == nil ? "invalid" : "http"
        return LuaErrorInfo(code: code, message: (item.lastError ?? "refused").replacingOccurrences(of: "Nightscout: ", with: ""),
                            retryable: false, status: item.lastStatus, service: "nightscout",
                            details: ["outbox_id": .text(item.identifier)])
    }
}
