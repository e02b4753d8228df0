import Foundation
import Lua
import NightscoutKit
import LookoutStore

/// Loop remote commands: `bolus`, `carbs`, `override`, `cancel_override` (and the toggles Loop
/// cannot receive through Nightscout, which say so). Every command passes the site's therapy
/// limits in NightscoutKit's `RemoteCommandGuard`, which reserves against the state database (one
/// budget per site for every script, profile and process), is audited in the state store, runs as
/// a dry run unless the profile says `remote = "live"`, and in the REPL asks on the terminal
/// first. Once a command may have left this host it counts in full: Loop's answer (a treatment or
/// a failure note, which a script could write itself) is reported and audited, never used to give
/// budget back.
extension NightscoutSite {
    static var remoteMethods: [String: LuaBinding] {
        var methods: [String: LuaBinding] = [
            "closed_loop": { call in unsupported(call, .closedLoop) },
            "autobolus": { call in unsupported(call, .autobolus) },
        ]
        for kind in ["bolus", "carbs", "override", "cancel_override"] {
            methods[kind] = { call in
                let parsed = try parsedCommand(call, kind: kind, at: 1, extra: [])
                return try command(call, parsed.command, shown: parsed.shown, opts: parsed.opts)
            }
        }
        return methods
    }

    /// A command of `kind` from the arguments starting at `n`, in the 1.0 methods' shapes:
    /// `bolus(units, opts)`, `carbs(grams, {absorption, at, …})`, `override(name, {duration, …})`,
    /// `cancel_override(opts)`, and for Remote 2.0 `closed_loop(on, opts)`, `autobolus(on, opts)`.
    /// `extra` are option names the caller accepts besides `notes` and `wait`.
    static func parsedCommand(_ call: LuaCall, kind: String, at n: Int, extra: Set<String>) throws
        -> (command: LoopCommand, shown: String?, opts: [String: LuaValue])
    {
        switch kind {
        case "bolus":
            let units = amount(call, n)
            return (.bolus(units: units.value), units.shown, try remoteOptions(call, n + 1, extra: extra))
        case "carbs":
            let grams = amount(call, n)
            let opts = try remoteOptions(call, n + 1, extra: extra.union(["absorption", "at"]))
            var hours: Double?
            if let a = opts["absorption"] {
                guard let d = a.double else { throw call.argumentError(n + 1, "opts.absorption: expected hours") }
                hours = d
            }
            var start: Date?
            if let at = opts["at"] {
                do throws(LuaRaise) { start = try NightscoutTimeArgument.date(at, what: "opts.at") } catch {
                    throw call.argumentError(n + 1, error.message)
                }
            }
            return (.carbs(grams: grams.value, absorptionHours: hours, startDate: start), grams.shown, opts)
        case "override":
            let name = try call.string(n)
            let opts = try remoteOptions(call, n + 1, extra: extra.union(["duration"]))
            var minutes: Double?
            if let d = opts["duration"] {
                do throws(LuaRaise) { minutes = try NightscoutTimeArgument.duration(d, what: "opts.duration") / 60 } catch {
                    throw call.argumentError(n + 1, error.message)
                }
            }
            return (.override(name: name, durationMinutes: minutes), nil, opts)
        case "cancel_override":
            return (.cancelOverride, nil, try remoteOptions(call, n, extra: extra))
        case "closed_loop", "autobolus":
            guard call.stack.kind(at: call.index(n)) == .boolean else {
                throw call.argumentError(n, "expected true (on) or false (off), got \(call.stack.typeName(at: call.index(n)))")
            }
            let on = call.stack.boolean(at: call.index(n))
            let opts = try remoteOptions(call, n + 1, extra: extra)
            return (kind == "closed_loop" ? .closedLoop(active: on) : .autobolus(active: on), nil, opts)
        default:
            throw call.argumentError(n - 1, "unknown command '\(kind)' (known: autobolus, bolus, cancel_override, carbs, closed_loop, override)")
        }
    }

    /// An amount argument exactly as given: a Lua number, or NaN (which the guard refuses and
    /// audits) for anything else, so `"1.5"` or `nil` is refused like any other bad amount.
    static func amount(_ call: LuaCall, _ n: Int) -> (value: Double, shown: String?) {
        guard call.stack.kind(at: call.index(n)) == .number else {
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

    /// Everything a remote command needs from the calling script, read on the Lua thread.
    struct RemoteRequest: Sendable {
        var remote: NightscoutRemote
        var client: NightscoutClient
        var queue: String
        var label: String
        var source: String
        /// The cluster lease the script runs under: reservations check it in the database, and
        /// nothing is sent once it ended (checked again after the wait for a one-time code).
        var lease: ClusterLeaseHandle?
        var notes: String?
        /// Seconds to wait for Loop's answer on the 1.0 path (0: do not wait).
        var wait: TimeInterval

        init(_ call: LuaCall, site: NightscoutSite, opts: [String: LuaValue], defaultWait: TimeInterval = 300) {
            remote = site.remote
            client = site.client
            queue = site.queue
            label = site.label
            source = call.engine.options.name
            lease = call.engine.options.lease as? ClusterLeaseHandle
            notes = opts["notes"]?.text
            wait = opts["wait"] == .bool(false) ? 0
                : opts["wait"].map { (try? NightscoutTimeArgument.duration($0, what: "")) ?? defaultWait } ?? defaultWait
        }
    }

    /// The guard's answer as either a finished result (dry run, refusal) or a ticket to send.
    enum Authorization: Sendable {
        case finished(CommandResult)
        case allowed(RemoteCommandTicket, RemoteCommandGuard)
    }

    /// Authorizes, confirms (REPL), sends and follows one command.
    static func command(_ call: LuaCall, _ command: LoopCommand, shown: String?, opts: [String: LuaValue]) throws -> LuaReturn {
        let request = RemoteRequest(call, site: try site(call), opts: opts)
        let engine = call.engine
        let description = AuditCommand(command).description
        if let recorded = SideEffectRecorder.remote(call, site: request.label, command: description, invalid: shown) { return recorded }
        return try wait(call, "nightscout \(command.kind)", {
            try await runV1(command, shown: shown, request)
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

    /// Passes `command` through the guard for the site (Remote 1.0 and 2.0 share its budgets,
    /// duplicates and audit log, as do every profile and process naming the site).
    static func authorize(_ command: LoopCommand, shown: String?, _ r: RemoteRequest) async throws -> Authorization {
        let guardian = try r.remote.guardian(fence: r.lease?.fence)
        let description = AuditCommand(command).description
        let keys = await r.remote.budgetKeys(client: r.client)
        switch await guardian.authorize(command, site: r.remote.site, keys: keys, source: r.source) {
        case .refused(.dryRun):
            return .finished(CommandResult(state: "dry_run", command: description, detail: "dry run: would send \(description)"))
        case .refused(let refusal):
            var message = refusal.description
            if let shown { message = "amount must be a number, got \(shown)" }
            return .finished(CommandResult(state: "refused", command: description, error: LuaErrorInfo(
                code: "refused", message: message, service: "nightscout", details: ["reason": .text(refusal.code)])))
        case .allowed(let ticket):
            return .allowed(ticket, guardian)
        }
    }

    /// The 1.0 path (`POST /api/v2/notifications/loop`): authorize, confirm, send, follow.
    static func runV1(_ command: LoopCommand, shown: String?, _ r: RemoteRequest) async throws -> CommandResult {
        switch try await authorize(command, shown: shown, r) {
        case .finished(let result): return result
        case .allowed(let ticket, let guardian): return await send(ticket, r, guardian: guardian)
        }
    }

    /// Reports a send that never left this host (declined, no OTP) and returns the script's
    /// `failed` result.
    static func failed(_ ticket: RemoteCommandTicket, guardian: RemoteCommandGuard, _ code: String, _ message: String,
                       outcome: RemoteCommandOutcome) async -> CommandResult {
        await guardian.complete(ticket, outcome: outcome)
        return CommandResult(state: "failed", command: AuditCommand(ticket.command).description, error: LuaErrorInfo(
            code: code, message: message, service: "nightscout"))
    }

    /// Reports a send the server answered with an error (it still counts: `indeterminate`) and
    /// returns the script's `failed` result.
    static func counted(_ ticket: RemoteCommandTicket, guardian: RemoteCommandGuard, _ code: String, _ message: String,
                        detail: String) async -> CommandResult {
        await guardian.complete(ticket, outcome: .indeterminate(detail: detail))
        return CommandResult(state: "failed", command: AuditCommand(ticket.command).description, error: LuaErrorInfo(
            code: code, message: message, service: "nightscout"))
    }

    /// The checks before any send, on either path (`checks`: the question at the terminal in the
    /// REPL, the OTP configuration a bolus or carbs needs), then the one-time code (and its time)
    /// when the command needs one: a code never sent to the pump before
    /// (`RemoteCommandGuard.oneTimeCode`), waiting for the next period within the command's
    /// `wait`, else not sent (`err.code == "otp_in_use"`). A failure is reported and returned.
    static func preflightCode(_ ticket: RemoteCommandTicket, _ r: RemoteRequest, guardian: RemoteCommandGuard) async -> Preflight {
        if let refused = await checks(ticket, r, guardian: guardian) { return .stop(refused) }
        guard ticket.command.needsOTP, let otp = r.remote.settings.otp else { return await leaseCheck(ticket, r, guardian, .send(nil)) }
        switch await guardian.oneTimeCode(for: ticket, otp: otp, wait: r.wait) {
        case .success(let claimed): return await leaseCheck(ticket, r, guardian, .send(claimed))
        case .failure(let refusal):
            let code = if case .codeInUse = refusal { "otp_in_use" } else { "unavailable" }
            return .stop(await failed(ticket, guardian: guardian, code, refusal.description,
                                      outcome: .failed(detail: refusal.description)))
        }
    }

    /// `decided`, unless the script's cluster lease ended meanwhile: then the command is not
    /// sent (audited `failed`, its reservation given back) and the script gets `err.code == "lease"`.
    static func leaseCheck(_ ticket: RemoteCommandTicket, _ r: RemoteRequest, _ guardian: RemoteCommandGuard,
                           _ decided: Preflight) async -> Preflight {
        guard let refusal = r.lease?.refusal() else { return decided }
        return .stop(await failed(ticket, guardian: guardian, "lease", "not sent: \(refusal)",
                                  outcome: .failed(detail: "not sent: \(refusal)")))
    }

    /// What `preflightCode` decided: send (with the claimed code and its time, if one is
    /// needed), or stop with the result already reported.
    enum Preflight: Sendable {
        case send((code: String, time: Date)?)
        case stop(CommandResult)
    }

    /// The terminal question and the OTP configuration check.
    static func checks(_ ticket: RemoteCommandTicket, _ r: RemoteRequest, guardian: RemoteCommandGuard) async -> CommandResult? {
        let description = AuditCommand(ticket.command).description
        if let confirm = r.remote.confirmation,
           !(await confirm("Send \(description) to \(r.label) (\(r.client.configuration.siteURL.absoluteString))?")) {
            return await failed(ticket, guardian: guardian, "declined", "not sent: declined at the terminal",
                                outcome: .failed(detail: "declined at the terminal"))
        }
        if ticket.command.needsOTP, r.remote.settings.otp == nil {
            return await failed(ticket, guardian: guardian, "config",
                                "not sent: \(ticket.command.kind) needs the Loop OTP URL (otp_url_env or otp_url_file in the profile)",
                                outcome: .failed(detail: "no OTP configured"))
        }
        return nil
    }

    /// Sends an authorized command through Remote 1.0 and reports its outcome to the guard
    /// (which audits it).
    static func send(_ ticket: RemoteCommandTicket, _ r: RemoteRequest, guardian: RemoteCommandGuard) async -> CommandResult {
        let description = AuditCommand(ticket.command).description
        let claimed: (code: String, time: Date)?
        switch await preflightCode(ticket, r, guardian: guardian) {
        case .stop(let refused): return refused
        case .send(let c): claimed = c
        }
        // Poll at least four times within a short wait (every 15 s for the default 5 minutes).
        let loop = LoopRemote(client: r.client, pollInterval: min(15, max(0.5, r.wait / 4)), timeout: r.wait)
        let receipt: LoopCommandReceipt
        do {
            // The claimed code is the generator's code at the claimed time.
            receipt = try await loop.send(ticket.command, otp: r.remote.settings.otp, notes: r.notes, enteredBy: "lookout (\(r.source))",
                                          now: claimed?.time)
        } catch let error as NightscoutError {
            if case .transport = error {
                // The request may have reached the server: count it as sent.
                await guardian.complete(ticket, outcome: .indeterminate(detail: error.description))
                return CommandResult(state: "unknown", command: description, error: LuaErrorInfo.nightscout(error))
            }
            // The server answered: the request left this host, so the command counts.
            return await counted(ticket, guardian: guardian, LuaErrorInfo.nightscout(error).code, LuaErrorInfo.nightscout(error).message,
                                 detail: error.description)
        } catch {
            return await counted(ticket, guardian: guardian, "rejected", String(describing: error), detail: String(describing: error))
        }
        let outcome = r.wait > 0 ? ((try? await loop.outcome(of: receipt)) ?? .unknown) : .delivered
        switch outcome {
        case .confirmed:
            await guardian.complete(ticket, outcome: .sent(detail: "Nightscout accepted it"))
            await guardian.confirm(ticket, detail: "Loop enacted \(description)")
            return CommandResult(state: "confirmed", command: description, detail: "Loop enacted it")
        case .failed(let reason):
            // A failure note is evidence a script can write itself: report it, keep counting.
            await guardian.complete(ticket, outcome: .sent(detail: "Nightscout accepted it"))
            await guardian.reportAppError(ticket, detail: "Loop's failure note says: \(reason) (the command still counts)")
            return CommandResult(state: "failed", command: description, error: LuaErrorInfo(
                code: "loop", message: "Loop did not enact it: \(reason)", service: "nightscout"))
        case .delivered:
            await guardian.complete(ticket, outcome: .sent(detail: "Nightscout accepted it"))
            return CommandResult(state: "sent", command: description, detail: "Nightscout accepted it; not waiting for Loop")
        case .unknown:
            await guardian.complete(ticket, outcome: .sent(detail: "Nightscout accepted it; Loop has not answered"))
            return CommandResult(state: "unknown", command: description,
                                 detail: "Nightscout accepted it, but Loop has not answered within \(Int(r.wait)) s")
        }
    }
}
