import Foundation
import LookoutConfig
import LookoutStore
import Lua
import NightscoutKit
import NorthlightKit
import LookoutWire

/// The object behind `feedback.client "app"`: a profile's `NorthlightClient`.
final class FeedbackClient: LuaObject {
    /// The userdata type.
    static let type = LuaObjectType(name: "lookout.feedback.client", displayName: "feedback client")

    let connection: NorthlightConnection
    let openStore: @Sendable () throws -> any StateBackend
    let policy: RetryPolicy

    /// What one script may keep waiting in the outbox.
    let quota: OutboxQuota?

    init(connection: NorthlightConnection, openStore: @escaping @Sendable () throws -> any StateBackend, policy: RetryPolicy,
         quota: OutboxQuota? = nil) {
        self.quota = quota
        self.connection = connection
        self.openStore = openStore
        self.policy = policy
    }

    var luaDescription: String { "feedback client \(connection.profile) (\(Redaction.display(connection.configuration.baseURL)))" }
    func luaClose(engine: LuaEngine) {}

    static var methods: [String: LuaBinding] {
        [
            "submit": { call in try submit(call, bug: false) },
            "bug": { call in try submit(call, bug: true) },
            "vote": { call in try vote(call) },
            "board": { call in try board(call) },
            "roadmap": { call in try roadmap(call) },
        ]
    }

    /// `fb:vote(id [, user])`: the item's vote count.
    static func vote(_ call: LuaCall) throws -> LuaReturn {
        let this = try call.object(as: FeedbackClient.self, type: type)
        let id = try call.string(1)
        let user = try call.optionalString(2)
        let connection = this.connection
        let operation: @Sendable () async throws -> Int = { try await connection.client().vote(feedbackID: id, userIdentifier: user) }
        return try wait(call, "feedback vote", operation) { stack, count in
            stack.push(LuaValue.int(Int64(count)))
            return 1
        }
    }

    /// `fb:board{status=…, refresh=…}`: the public board.
    static func board(_ call: LuaCall) throws -> LuaReturn {
        let this = try call.object(as: FeedbackClient.self, type: type)
        let opts = try checked(call, 1, known: ["status", "refresh"])
        let status = try statuses(call, opts["status"])
        let refresh = try flag(call, opts["refresh"], "refresh")
        let connection = this.connection
        let operation: @Sendable () async throws -> [PublicFeedback] = {
            try await connection.client().publicFeedback(status: status, refresh: refresh)
        }
        return try wait(call, "feedback board", operation) { stack, items in
            stack.push(LuaValue.array(items.map(FeedbackLuaValues.item)))
            return 1
        }
    }

    /// `fb:roadmap{refresh=…}`: the public roadmap.
    static func roadmap(_ call: LuaCall) throws -> LuaReturn {
        let this = try call.object(as: FeedbackClient.self, type: type)
        let opts = try checked(call, 1, known: ["refresh"])
        let refresh = try flag(call, opts["refresh"], "refresh")
        let connection = this.connection
        let operation: @Sendable () async throws -> [RoadmapItem] = { try await connection.client().roadmap(refresh: refresh) }
        return try wait(call, "feedback roadmap", operation) { stack, items in
            stack.push(LuaValue.array(items.map(FeedbackLuaValues.roadmapItem)))
            return 1
        }
    }

    /// `fb:submit{title, description, category, email}` / `fb:bug{title, description, severity, steps, email}`.
    static func submit(_ call: LuaCall, bug: Bool) throws -> LuaReturn {
        let this = try call.object(as: FeedbackClient.self, type: type)
        let known = bug ? ["title", "description", "severity", "steps", "email"] : ["title", "description", "category", "email"]
        let opts = try checked(call, 1, known: known)
        var text: [String: String] = [:]
        for key in known {
            guard let value = opts[key] else { continue }
            guard let s = value.text else { throw call.argumentError(1, "opts.\(key): expected a string") }
            text[key] = s
        }
        let connection = this.connection, openStore = this.openStore, policy = this.policy, quota = this.quota, fields = text
        let source = call.engine.options.name
        let operation: @Sendable () async throws -> NorthlightSubmissions.Outcome = {
            let client = try await connection.client()
            let submission: NorthlightSubmission
            if bug {
                var severity = NorthlightSeverity.medium
                if let text = fields["severity"] { severity = try NorthlightSeverity.parse(text) }
                submission = try await client.prepareBug(title: fields["title"] ?? "", description: fields["description"] ?? "",
                                                         severity: severity, stepsToReproduce: fields["steps"], email: fields["email"])
            } else {
                submission = try await client.prepareFeedback(title: fields["title"] ?? "", description: fields["description"] ?? "",
                                                              category: fields["category"], email: fields["email"])
            }
            return try await NorthlightSubmissions.submit(submission, connection: connection, client: client, store: try openStore(),
                                                          policy: policy, source: source, quota: quota)
        }
        return try wait(call, bug ? "feedback bug" : "feedback submit", operation) { stack, outcome in
            stack.push(FeedbackLuaValues.outcome(outcome))
            return 1
        }
    }

    /// Kit work for a script: Northlight errors become `nil, err`.
    static func wait<T: Sendable>(_ call: LuaCall, _ what: String, _ operation: @escaping @Sendable () async throws -> T,
                                  deliver: @escaping (LuaStack, T) -> Int32) throws(LuaRaise) -> LuaReturn {
        try call.request(what, {
            do { return try await operation() } catch { throw LuaErrorInfo.northlight(error) }
        }, deliver: deliver)
    }

    /// An options table with only `known` keys.
    static func checked(_ call: LuaCall, _ n: Int, known: [String]) throws(LuaRaise) -> [String: LuaValue] {
        let opts = try call.options(n)
        if let unknown = opts.keys.sorted().first(where: { !known.contains($0) }) {
            throw call.argumentError(n, "unknown option '\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
        }
        return opts
    }

    static func flag(_ call: LuaCall, _ value: LuaValue?, _ name: String) throws(LuaRaise) -> Bool {
        guard let value else { return false }
        guard case .bool(let b) = value else { throw call.argumentError(1, "opts.\(name): expected a boolean") }
        return b
    }

    /// `status = "approved"`, `"approved,suggested"` or `{"approved", "suggested"}`.
    static func statuses(_ call: LuaCall, _ value: LuaValue?) throws(LuaRaise) -> [String] {
        switch value {
        case nil: return []
        case .string?:
            return (value?.text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        case .array(let items)?:
            var out: [String] = []
            for item in items {
                guard let s = item.text else { throw call.argumentError(1, "opts.status: expected strings") }
                out.append(s)
            }
            return out
        default:
            throw call.argumentError(1, "opts.status: expected a string or a list of strings")
        }
    }
}

/// Northlight answers as scripts see them (the API's field names).
enum FeedbackLuaValues {
    static func item(_ f: PublicFeedback) -> LuaValue {
        var o: [String: LuaValue] = [
            "id": .text(f.id), "title": .text(f.title), "description": .text(f.description), "status": .text(f.status),
            "vote_count": .int(Int64(f.voteCount)), "created_at": .text(f.createdAt),
        ]
        if let c = f.category { o["category"] = .text(c) }
        return .object(o)
    }

    static func roadmapItem(_ r: RoadmapItem) -> LuaValue {
        var o: [String: LuaValue] = [
            "id": .text(r.id), "position": .int(Int64(r.position)),
            "feature": .object(["title": .text(r.feature.title), "description": .text(r.feature.description)]),
        ]
        if let d = r.estimatedDate { o["estimated_date"] = .text(d) }
        return .object(o)
    }

    /// `{state = "sent", id}` or `{state = "queued", outbox_id, error, retry_after}`.
    static func outcome(_ outcome: NorthlightSubmissions.Outcome) -> LuaValue {
        switch outcome {
        case .sent(let id): return .object(["state": .text("sent"), "id": .text(id)])
        case .queued(let item, let reason):
            var o: [String: LuaValue] = [
                "state": .text("queued"), "outbox_id": .text(item.identifier),
                "error": .text(reason.description.replacingOccurrences(of: "Northlight: ", with: "")),
            ]
            if let after = reason.retryAfter { o["retry_after"] = .double(after) }
            return .object(o)
        }
    }
}
