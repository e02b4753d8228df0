import Foundation
import Lua
import NightscoutKit

/// Loop Remote 2.0 (spec §5.3): `home:remote_command(kind, …)` stores a command on the site and
/// returns a handle that follows its status; `home:remote_commands{…}` lists them.
///
/// Every send passes the same guard as Remote 1.0 (`authorize`: limits, hourly budgets shared
/// with 1.0 sends, duplicates, minimum interval, dry run, audit) and the same `preflight`
/// (terminal confirmation, OTP). A site without 2.0 is detected once per client; with
/// `remote_fallback = "v1"` (or `opts.fallback = "v1"`) the command goes through 1.0 instead and
/// the result says so.
extension NightscoutSite {
    static var remote2Methods: [String: LuaBinding] {
        [
            "remote_command": { call in
                let kind = try call.string(1)
                let parsed = try parsedCommand(call, kind: kind, at: 2, extra: ["fallback", "notify"])
                return try remoteCommand(call, parsed.command, shown: parsed.shown, opts: parsed.opts)
            },
            "remote_commands": { call in try listRemoteCommands(call) },
        ]
    }

    /// What a Remote 2.0 send ended as (or the 1.0 result when it fell back).
    struct Remote2Result: Sendable {
        var result: CommandResult
        var via = "v2"
        var id: String?
        var state: CommandState?
        var message = ""
        var created: Date?
        var fallback: String?
    }

    static let unsupportedMessage = RemoteCommandsError.notSupported.description

    static func remoteCommand(_ call: LuaCall, _ command: LoopCommand, shown: String?, opts: [String: LuaValue]) throws -> LuaReturn {
        let site = try site(call)
        var fallback = site.remote.settings.fallbackToV1
        switch opts["fallback"] {
        case nil: break
        case .text("v1")?: fallback = true
        case .bool(false)?, .text("none")?: fallback = false
        default: throw call.argumentError(call.count, "opts.fallback: expected \"v1\", \"none\" or false")
        }
        var notify = true
        if let n = opts["notify"] {
            guard case .bool(let b) = n else { throw call.argumentError(call.count, "opts.notify: expected a boolean") }
            notify = b
        }
        let request = RemoteRequest(call, site: site, opts: opts, defaultWait: 0)
        let engine = call.engine, allowFallback = fallback, notification = notify
        return try wait(call, "nightscout remote_command \(command.kind)", {
            try await runV2(command, shown: shown, request, fallback: allowFallback, notify: notification)
        }) { stack, r in
            if let error = r.result.error {
                stack.pushNil()
                engine.push(error: error, on: stack)
                return 2
            }
            pushHandle(r, site: site, engine: engine, stack: stack)
            return 1
        }
    }

    /// The 2.0 path: capability check (fallback or error), guard, preflight, `POST`.
    static func runV2(_ command: LoopCommand, shown: String?, _ r: RemoteRequest, fallback: Bool, notify: Bool) async throws
        -> Remote2Result
    {
        guard try await r.client.supportsRemoteCommands() else {
            let description = AuditCommand(command).description
            guard fallback else {
                return Remote2Result(result: CommandResult(state: "failed", command: description, error: LuaErrorInfo(
                    code: "unsupported", message: unsupportedMessage + " (set remote_fallback = \"v1\" to use Remote 1.0)",
                    service: "nightscout")))
            }
            if let feature = command.remote2OnlyFeature {
                return Remote2Result(result: CommandResult(state: "failed", command: description, error: LuaErrorInfo(
                    code: "unsupported", message: unsupportedMessage + ", and Remote 1.0 cannot switch \(feature.rawValue)",
                    service: "nightscout")))
            }
            let v1 = try await runV1(command, shown: shown, r)
            return Remote2Result(result: v1, via: "v1", message: v1.detail ?? "",
                                 fallback: unsupportedMessage + "; sent through Remote 1.0 (remote_fallback = \"v1\")")
        }
        switch try await authorize(command, shown: shown, r) {
        case .finished(let result):
            return Remote2Result(result: result, message: result.detail ?? "")
        case .allowed(let ticket, let guardian):
            return await sendV2(ticket, r, guardian: guardian, notify: notify)
        }
    }

    /// Stores an authorized command and reports the send to the guard (which audits it).
    static func sendV2(_ ticket: RemoteCommandTicket, _ r: RemoteRequest, guardian: RemoteCommandGuard, notify: Bool) async
        -> Remote2Result
    {
        let description = AuditCommand(ticket.command).description
        let claimed: (code: String, time: Date)?
        switch await preflightCode(ticket, r, guardian: guardian) {
        case .stop(let refused): return Remote2Result(result: refused)
        case .send(let c): claimed = c
        }
        let created = claimed?.time ?? Date()
        // Commands without an OTP check carry this period's code unclaimed, as before.
        let otp = claimed?.code ?? (ticket.command.needsOTP ? nil : r.remote.settings.otp?.code(at: created)) ?? ""
        let command = RemoteCommand(createdDate: created, action: RemoteAction(ticket.command), sendNotification: notify, otp: otp)
        do {
            let stored = try await r.client.sendRemoteCommand(command)
            let id = stored.id ?? ""
            await guardian.complete(ticket, outcome: .sent(detail: "remote command 2.0 \(id) stored (\(stored.status.state.rawValue))"))
            NightscoutRemote.awaitingOutcome(queue: r.queue, id: id, ticket: ticket)
            return Remote2Result(result: CommandResult(state: stored.status.state.luaName, command: description), id: id,
                                 state: stored.status.state, message: stored.status.message, created: created)
        } catch let error as NightscoutError {
            if case .transport = error {
                // The command may be stored: count it as sent.
                await guardian.complete(ticket, outcome: .indeterminate(detail: "remote command 2.0: \(error.description)"))
                return Remote2Result(result: CommandResult(state: "unknown", command: description, error: LuaErrorInfo.nightscout(error)))
            }
            // The server answered: the request left this host, so the command counts.
            return Remote2Result(result: await counted(ticket, guardian: guardian, LuaErrorInfo.nightscout(error).code,
                                                       LuaErrorInfo.nightscout(error).message,
                                                       detail: "remote command 2.0: \(error.description)"))
        } catch {
            let code = (error as? RemoteCommandsError) == .notSupported ? "unsupported" : "invalid_response"
            return Remote2Result(result: await counted(ticket, guardian: guardian, code, String(describing: error),
                                                       detail: "remote command 2.0: \(error)"))
        }
    }

    /// `home:remote_commands{since=…, state=…, count=…}`: stored commands as handles.
    static func listRemoteCommands(_ call: LuaCall) throws -> LuaReturn {
        let site = try site(call)
        let opts = try call.options(1)
        let known: Set<String> = ["since", "state", "count"]
        if let unknown = opts.keys.sorted().first(where: { !known.contains($0) }) {
            throw call.argumentError(1, "unknown option '\(unknown)' (known: count, since, state)")
        }
        var since = Date().addingTimeInterval(-86_400)
        if let s = opts["since"] {
            do throws(LuaRaise) {
                // A duration back from now ("10m", "24h"), as `lookout remote list --since`
                // takes, or a time (epoch ms or ISO).
                if let text = s.text, text.contains(where: \.isLetter), Quantities.parseDuration(text) != nil {
                    since = call.engine.clock.now().addingTimeInterval(-(try NightscoutTimeArgument.duration(s, what: "opts.since")))
                } else {
                    since = try NightscoutTimeArgument.date(s, what: "opts.since")
                }
            } catch {
                throw call.argumentError(1, error.message)
            }
        }
        var state: CommandState?
        if let s = opts["state"] {
            guard let text = s.text, let parsed = CommandState(luaName: text) else {
                throw call.argumentError(1, "opts.state: expected one of pending, in_progress, success, error")
            }
            state = parsed
        }
        var count = 50
        if let c = opts["count"] {
            guard case .int(let n) = c, n > 0, n <= 1000 else { throw call.argumentError(1, "opts.count: expected an integer 1…1000") }
            count = Int(n)
        }
        let client = site.client, engine = call.engine, from = since, wanted = state, limit = count
        let remote = site.remote, queue = site.queue
        return try wait(call, "nightscout remote_commands", {
            let commands = try await client.fetchRemoteCommands(since: from, state: wanted, count: limit)
            for c in commands where c.status.state.isFinal {
                if let id = c.id { await remote.reportOutcome(queue: queue, id: id, status: c.status) }
            }
            return commands
        }) { stack, commands in
            stack.pushTable(fields: 0)
            for (i, c) in commands.enumerated() {
                let description = AuditCommand(c.action.loopCommand).description
                pushHandle(Remote2Result(result: CommandResult(state: c.status.state.luaName, command: description), id: c.id,
                                         state: c.status.state, message: c.status.message, created: c.createdDate),
                           site: site, engine: engine, stack: stack)
                stack.setIndex(i + 1, in: -2)
            }
            return 1
        }
    }

    /// Pushes a command handle: `{id, state, message, command, via, created, fallback}` with the
    /// handle methods (`NightscoutRemoteCommandHandle`).
    static func pushHandle(_ r: Remote2Result, site: NightscoutSite, engine: LuaEngine, stack: LuaStack) {
        var fields: [String: LuaValue] = [
            "state": .text(r.result.state), "command": .text(r.result.command), "via": .text(r.via),
            "message": .text(r.state == nil ? (r.result.detail ?? r.message) : r.message),
        ]
        if let id = r.id { fields["id"] = .text(id) }
        if let created = r.created { fields["created"] = .text(NightscoutDate(created).isoString) }
        if let fallback = r.fallback { fields["fallback"] = .text(fallback) }
        stack.push(.object(fields))
        engine.push(object: site, type: NightscoutSite.type, on: stack)
        stack.setField("_client", in: -2)
        NightscoutRemoteCommandHandle.attach(to: -1, stack: stack)
    }
}

extension CommandState {
    /// The state as scripts see it: `pending`, `in_progress`, `success`, `error`.
    var luaName: String {
        switch self {
        case .pending: return "pending"
        case .inProgress: return "in_progress"
        case .success: return "success"
        case .error: return "error"
        }
    }

    /// A state from its script name or wire name (`in_progress` or `InProgress`).
    init?(luaName: String) {
        if let s = CommandState.allCases.first(where: { $0.luaName == luaName || $0.rawValue == luaName }) { self = s } else { return nil }
    }
}
