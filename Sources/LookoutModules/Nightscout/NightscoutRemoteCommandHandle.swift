import Foundation
import LookoutWire
import LookoutConfig
import Lua
import NightscoutKit

/// The methods of the table `home:remote_command(…)` returns: `cmd:status()` asks the site
/// once, `cmd:wait{timeout=…, interval=…}` follows the status until `success`/`error` or the
/// timeout (the task waits; other tasks run). Both update `cmd.state` and `cmd.message`. A
/// handle without `id` (dry run, or sent through Remote 1.0) is already final.
///
/// The first time a command of this process is seen final, its outcome is audited (`confirmed`
/// for `Success`, `app-error` for `Error`) by the guard that sent it.
enum NightscoutRemoteCommandHandle {
    /// Registry key of the metatable.
    static let metatableKey = "lookout.nightscout.remote_command_mt"


    /// Creates the metatable (once per state).
    static func register(engine: LuaEngine, stack: LuaStack) throws {
        guard stack.ensure(6) else { throw LuaRaise("nightscout: stack overflow") }
        if stack.rawField(metatableKey, of: LuaStack.registry) == .table { stack.pop(); return }
        stack.pop()
        try stack.load(PackageResources.remote_command_lua, name: "=[lookout] nightscout.remote_command", what: "nightscout")
        engine.pushFunction("nightscout remote command:wait", on: stack) { call in try fetch(call) }
        try stack.protectedCall(arguments: 1, results: 1, what: "nightscout")
        stack.setField(metatableKey, in: LuaStack.registry)
    }

    /// Sets the metatable on the handle table at `index`.
    static func attach(to index: Int32, stack: LuaStack) {
        let t = stack.absolute(index)
        guard stack.ensure(2) else { return }
        stack.rawField(metatableKey, of: LuaStack.registry)
        stack.setMetatable(of: t)
    }

    /// `fetch(client, id, created, timeout, interval)` → `state, message[, timeout_err]` or
    /// `nil, err`.
    static func fetch(_ call: LuaCall) throws -> LuaReturn {
        let site = try call.object(1, as: NightscoutSite.self, type: NightscoutSite.type)
        let id = try call.string(2)
        let createdText = try call.optionalString(3)
        func seconds(_ n: Int, _ name: String) throws(LuaRaise) -> Double {
            do throws(LuaRaise) {
                let value = try call.value(n, name: name)
                if value == .int(0) || value == .double(0) { return 0 }
                let d = try NightscoutTimeArgument.duration(value, what: "opts.\(name)")
                guard d.isFinite, d >= 0 else { throw LuaRaise("opts.\(name): expected a duration of 0 or more") }
                return d
            } catch {
                throw LuaRaise("bad argument #1 to 'wait' (\(error.message))")
            }
        }
        let timeout = try seconds(4, "timeout"), interval = max(0.05, try seconds(5, "interval"))
        let created = createdText.flatMap { NightscoutDate(string: $0)?.date } ?? Date().addingTimeInterval(-86_400)
        let client = site.client, queue = site.queue, remote = site.remote, engine = call.engine
        return try NightscoutSite.wait(call, "nightscout remote command", {
            let command = try await client.waitForRemoteCommand(id: id, createdDate: created, timeout: timeout, pollInterval: interval)
            if command.status.state.isFinal {
                await remote.reportOutcome(queue: queue, id: id, status: command.status)
            }
            return command.status
        }) { stack, status in
            stack.push(.text(status.state.luaName))
            stack.push(.text(status.message))
            guard !status.state.isFinal, timeout > 0 else { return 2 }
            engine.push(error: LuaErrorInfo(
                code: "timeout", message: "remote command \(id) is still \(status.state.luaName) after \(Quantities.formatDuration(timeout))",
                retryable: true, service: "nightscout", details: ["state": .text(status.state.luaName)]), on: stack)
            return 3
        }
    }
}

extension NightscoutRemote {
    private static let awaiting = Locked<[String: RemoteCommandTicket]>([:])

    /// Remembers the ticket of a stored Remote 2.0 command until its final state is audited.
    static func awaitingOutcome(queue: String, id: String, ticket: RemoteCommandTicket) {
        awaiting.withLock { $0[queue + "\n" + id] = ticket }
    }

    /// Audits a command's final state once (`confirmed` or `app-error`), if this process sent it.
    func reportOutcome(queue: String, id: String, status: CommandStatus) async {
        guard let ticket = Self.awaiting.withLock({ $0.removeValue(forKey: queue + "\n" + id) }),
              let guardian = try? guardian() else { return }
        let description = AuditCommand(ticket.command).description
        switch status.state {
        case .success:
            await guardian.confirm(ticket, detail: "remote command 2.0 \(id): Success, Loop enacted \(description)"
                + (status.message.isEmpty ? "" : " (\(status.message))"))
        case .error:
            await guardian.reportAppError(ticket, detail: "remote command 2.0 \(id): Error: "
                + (status.message.isEmpty ? "no message" : status.message))
        default:
            break
        }
    }
}
