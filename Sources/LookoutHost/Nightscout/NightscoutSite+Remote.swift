import CLua
import Foundation
import Lua
import NightscoutKit

/// Loop remote commands: `bolus`, `carbs`, `override`, `cancel_override` (and the toggles Loop
/// cannot receive through Nightscout, which say so). Every command passes the profile's therapy
/// limits in NightscoutKit's `RemoteCommandGuard` (shared by every script of the process), is
/// audited in the state store, runs as a dry run unless the profile says `remote = "live"`, and in
/// the REPL asks on the terminal first.
extension NightscoutSite {
    static var remoteMethods: [String: LuaBinding] {
        [
            "bolus": { call in
                let units = amount(call, 1)
                let opts = try remoteOptions(call, 2, extra: [])
                return try command(call, .bolus(units: units.value), shown: units.shown, opts: opts)
            },
            "carbs": { call in
                let grams = amount(call, 1)
                let opts = try remoteOptions(call, 2, extra: ["absorption", "at"])
                var hours: Double?
                if let a = opts["absorption"] {
                    guard let d = a.double else { throw call.argumentError(2, "opts.absorption: expected hours") }
                    hours = d
                }
                var start: Date?
                if let at = opts["at"] {
                    do throws(LuaRaise) { start = try NightscoutTimeArgument.date(at, what: "opts.at") } catch {
                        throw call.argumentError(2, error.message)
                    }
                }
                return try command(call, .carbs(grams: grams.value, absorptionHours: hours, startDate: start), shown: grams.shown,
                                   opts: opts)
            },
            "override": { call in
                let name = try call.string(1)
                let opts = try remoteOptions(call, 2, extra: ["duration"])
                var minutes: Double?
                if let d = opts["duration"] {
                    do throws(LuaRaise) { minutes = try NightscoutTimeArgument.duration(d, what: "opts.duration") / 60 } catch {
                        throw call.argumentError(2, error.message)
                    }
                }
                return try command(call, .override(name: name, durationMinutes: minutes), shown: nil, opts: opts)
            },
            "cancel_override": { call in
                try command(call, .cancelOverride, shown: nil, opts: try remoteOptions(call, 1, extra: []))
            },
            "closed_loop": { call in unsupported(call, .closedLoop) },
            "autobolus": { call in unsupported(call, .autobolus) },
        ]
    }

    /// An amount argument exactly as given: a Lua number, or NaN (which the guard refuses and
    /// audits) for anything else, so `"1.5"` or `nil` is refused like any other bad amount.
    static func amount(_ call: LuaCall, _ n: Int) -> (value: Double, shown: String?) {
        guard lua_type(call.L, call.index(n)) == LUA_TNUMBER else {
            let shown = call.stack.typeName(at: call.index(n)) + (call.stack.string(at: call.index(n)).map { " \(String(reflecting: $0))" } ?? "")
            return (.nan, shown)
        }
        return (call.stack.number(at: call.index(n)) ?? .nan, nil)
    }

    static func remoteOptions(_ call: LuaCall, _ n: Int, extra: Set<String>) throws(LuaRaise) -> [String: LuaValue] {
        let opts = try call.options(n)
        let known = extra.union(["notes", "wait"])
        if let unknown = opts.keys.sorted().first(where: { !known.contains($0) }) {
            throw call.argumentError(n, "unknown option '\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
        }
        if let notes = opts["notes"], notes.text == nil { throw call.argumentError(n, "opts.notes: expected a string") }
        if let wait = opts["wait"] {
            do throws(LuaRaise) { _ = try NightscoutTimeArgument.duration(wait, what: "opts.wait") } catch {
                if wait != .bool(false) { throw call.argumentError(n, error.message + " or false") }
            }
        }
        return opts
    }

    static func unsupported(_ call: LuaCall, _ feature: LoopRemoteFeature) -> LuaReturn {
        call.failure(LuaErrorInfo(code: "unsupported", message: LoopRemote.unsupported(feature).description, service: "nightscout"))
    }

    /// What a command ended as, for scripts.
    struct CommandResult: Sendable {
        var state: String
        var command: String
        var detail: String?
        var error: LuaErrorInfo?
    }

    /// Authorizes, confirms (REPL), sends and follows one command.
    static func command(_ call: LuaCall, _ command: LoopCommand, shown: String?, opts: [String: LuaValue]) throws -> LuaReturn {
        let site = try site(call)
        let remote = site.remote, client = site.client, queue = site.queue, label = site.label
        let source = call.engine.options.name
        let notes = opts["notes"]?.text
        let waitSeconds: TimeInterval = opts["wait"] == .bool(false) ? 0
            : (try? NightscoutTimeArgument.duration(opts["wait"] ?? .int(300), what: "")) ?? 300
        let engine = call.engine
        let description = AuditCommand(command).description
        if let recorded = SideEffectRecorder.remote(call, site: label, command: description, invalid: shown) { return recorded }
        return try wait(call, "nightscout \(command.kind)", {
            let guardian = try remote.guardian()
            switch await guardian.authorize(command, site: queue, source: source) {
            case .refused(.dryRun):
                return CommandResult(state: "dry_run", command: description, detail: "dry run: would send \(description)")
            case .refused(let refusal):
                var message = refusal.description
                if let shown { message = "amount must be a number, got \(shown)" }
                return CommandResult(state: "refused", command: description, error: LuaErrorInfo(
                    code: "refused", message: message, service: "nightscout", details: ["reason": .text(refusal.code)]))
            case .allowed(let ticket):
                return await send(ticket, remote: remote, client: client, site: label, notes: notes, source: source,
                                  wait: waitSeconds, guardian: guardian)
            }
        }) { stack, result in
            if let error = result.error {
                stack.pushNil()
                engine.push(error: error, on: stack)
                return 2
            }
            var fields: [String: LuaValue] = ["state": .text(result.state), "command": .text(result.command)]
            if let detail = result.detail { fields["detail"] = .text(detail) }
            stack.push(.object(fields))
            return 1
        }
    }

    /// Sends an authorized command and reports its outcome to the guard (which audits it).
    static func send(_ ticket: RemoteCommandTicket, remote: NightscoutRemote, client: NightscoutClient, site: String,
                     notes: String?, source: String, wait: TimeInterval, guardian: RemoteCommandGuard) async -> CommandResult {
        let description = AuditCommand(ticket.command).description
        func failed(_ code: String, _ message: String, outcome: RemoteCommandOutcome) async -> CommandResult {
            await guardian.complete(ticket, outcome: outcome)
            return CommandResult(state: "failed", command: description, error: LuaErrorInfo(
                code: code, message: message, service: "nightscout"))
        }
        if let confirm = remote.confirmation, !(await confirm("Send \(description) to \(site) (\(client.configuration.siteURL.absoluteString))?")) {
            return await failed("declined", "not sent: declined at the terminal", outcome: .failed(detail: "declined at the terminal"))
        }
        if ticket.command.needsOTP, remote.settings.otp == nil {
            return await failed("config", "not sent: \(ticket.command.kind) needs the Loop OTP URL (otp_url_env or otp_url_file in the profile)",
                                outcome: .failed(detail: "no OTP configured"))
        }
        let loop = LoopRemote(client: client, timeout: wait)
        let receipt: LoopCommandReceipt
        do {
            receipt = try await loop.send(ticket.command, otp: remote.settings.otp, notes: notes, enteredBy: "lookout (\(source))")
        } catch let error as NightscoutError {
            if case .transport = error {
                // The request may have reached the server: count it as sent.
                await guardian.complete(ticket, outcome: .indeterminate(detail: error.description))
                return CommandResult(state: "unknown", command: description, error: LuaErrorInfo.nightscout(error))
            }
            return await failed(LuaErrorInfo.nightscout(error).code, LuaErrorInfo.nightscout(error).message,
                                outcome: .failed(detail: error.description))
        } catch {
            return await failed("rejected", String(describing: error), outcome: .failed(detail: String(describing: error)))
        }
        let outcome = wait > 0 ? ((try? await loop.outcome(of: receipt)) ?? .unknown) : .delivered
        switch outcome {
        case .confirmed:
            await guardian.complete(ticket, outcome: .sent(detail: "Nightscout accepted it"))
            await guardian.confirm(ticket, detail: "Loop enacted \(description)")
            return CommandResult(state: "confirmed", command: description, detail: "Loop enacted it")
        case .failed(let reason):
            return await failed("loop", "Loop did not enact it: \(reason)", outcome: .failed(detail: "Loop: \(reason)"))
        case .delivered:
            await guardian.complete(ticket, outcome: .sent(detail: "Nightscout accepted it"))
            return CommandResult(state: "sent", command: description, detail: "Nightscout accepted it; not waiting for Loop")
        case .unknown:
            await guardian.complete(ticket, outcome: .sent(detail: "Nightscout accepted it; Loop has not answered"))
            return CommandResult(state: "unknown", command: description,
                                 detail: "Nightscout accepted it, but Loop has not answered within \(Int(wait)) s")
        }
    }
}
