import Foundation
import LookoutConfig
import LookoutStore
import Lua
import NightscoutKit

/// `outbox`: what the upload queue holds, for scripts (`lookout outbox` shows the same).
///
/// Uploads (`upload_bg`, `upload_treatment`, `create`) are stored here before they are sent
/// and stay until the server has them; failures that retrying cannot fix stay as `failed` until
/// retried or dropped. See `Stubs/outbox.lua`.
public struct OutboxModule: LuaModule {
    public let name = "outbox"
    public var stub: String { String(decoding: PackageResources.outbox_lua, as: UTF8.self) }

    /// Opens the state database, on first use and off the Lua thread.
    let open: @Sendable () throws -> any StateBackend

    /// The module over the process's store at `paths`.
    public init(paths: LookoutPaths) { open = { try StateBackends.shared(paths: paths) } }
    /// The module over an open store (tests).
    public init(store: any StateBackend) { open = { store } }

    public func push(into engine: LuaEngine, stack: LuaStack) throws {
        let open = self.open
        engine.pushLibrary([
            "list": { call in
                let opts = try call.options(1)
                if let unknown = opts.keys.sorted().first(where: { !["state", "limit"].contains($0) }) {
                    throw call.argumentError(1, "unknown option '\(unknown)' (known: limit, state)")
                }
                let states = try Self.states(call, opts["state"])
                var limit = 100
                if let value = opts["limit"] {
                    limit = Int(try call.integer(value, argument: 1, what: "opts.limit", in: .count(1, 100_000)))
                }
                let count = limit
                return try call.wait("outbox.list", { try await open().items(site: nil, states: states, limit: count) }) { stack, items in
                    stack.push(.array(items.map(OutboxLua.value)))
                    return 1
                }
            },
            "retry": { call in
                let id = try call.string(1)
                return try call.wait("outbox.retry", { try await Self.luaErrors { try await OutboxService.retry(id, store: try open(), config: nil) } }) { stack, item in
                    stack.push(OutboxLua.value(item))
                    return 1
                }
            },
            "drop": { call in
                let id = try call.string(1)
                return try call.wait("outbox.drop", { () async throws -> Bool in
                    try await Self.luaErrors { try await OutboxService.drop(id, store: try open()) }
                    return true
                }) { stack, _ in
                    stack.push(true)
                    return 1
                }
            },
            "flush": { call in
                try call.wait("outbox.flush", { () async throws -> Outbox.DrainReport in
                    var total = Outbox.DrainReport()
                    for (_, entry) in NightscoutOutboxes.open(in: try open()) {
                        let r = await entry.outbox.drain(ignoringBackoff: true)
                        total.sent += r.sent; total.retrying += r.retrying; total.failed += r.failed
                    }
                    return total
                }) { stack, r in
                    let report: [String: LuaValue] = [
                        "sent": .int(Int64(r.sent)), "retrying": .int(Int64(r.retrying)), "failed": .int(Int64(r.failed)),
                    ]
                    stack.push(.object(report))
                    return 1
                }
            },
        ], prefix: "outbox.", on: stack)
    }

    /// `opts.state`: "pending", "failed", "sent" or "all" (default: pending and failed).
    static func states(_ call: LuaCall, _ value: LuaValue?) throws(LuaRaise) -> Set<OutboxItem.State> {
        guard let value else { return [.pending, .failed] }
        if value.text == "all" { return Set(OutboxItem.State.allCases) }
        guard let text = value.text, let state = OutboxItem.State(rawValue: text) else {
            throw call.argumentError(1, "opts.state: expected \"pending\", \"failed\", \"sent\" or \"all\"")
        }
        return [state]
    }

    /// Runs `body`, giving outbox errors their script codes (`not_found`, `ambiguous`).
    static func luaErrors<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as OutboxServiceError {
            switch error {
            case .notFound: throw LuaErrorInfo(code: "not_found", message: error.description)
            case .ambiguous: throw LuaErrorInfo(code: "ambiguous", message: error.description)
            }
        }
    }
}
