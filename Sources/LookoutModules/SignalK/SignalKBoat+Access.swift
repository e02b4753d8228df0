import Foundation
import Lua
import SignalKKit

/// Access requests for scripts: `boat:request_access{…}` and `boat:token_state()`, and the
/// handling of a token the server refuses on REST. The token itself never reaches a script.
extension SignalKLuaBoat {
    /// The permissions a script may ask for (`admin` only through the profile's `access`).
    static let scriptPermissions: [String: SignalKPermission] = ["readonly": .readonly, "readwrite": .readwrite]

    /// `request_access` and `token_state`.
    static var accessMethods: [String: LuaBinding] { [
        "request_access": { call in
            let boat = try boat(call)
            let opts = try call.options(1)
            let known: Set<String> = ["description", "permissions", "wait"]
            if let unknown = opts.keys.sorted().first(where: { !known.contains($0) }) {
                throw call.argumentError(1, "unknown option '\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
            }
            guard let access = boat.access else {
                return call.failure(LuaErrorInfo(
                    code: "config", message: "access requests need a [signalk.NAME] profile (signalk.connect \"NAME\"), "
                        + "so that the token is kept for that server only", service: "signalk"))
            }
            let policy = access.policy
            var description = policy?.description
            if let d = opts["description"] {
                guard let text = d.text else { throw call.argumentError(1, "opts.description: expected a string") }
                if let problem = SignalKAccessPolicy.checkDescription(text) { throw call.argumentError(1, "opts.description: \(problem)") }
                description = text
            }
            guard let description else {
                throw call.argumentError(1, "opts.description: required (the administrator sees it) unless the profile has access = {description = …}")
            }
            var permissions = policy?.permissions
            if let p = opts["permissions"] {
                guard let text = p.text, let perm = scriptPermissions[text] else {
                    throw call.argumentError(1, "opts.permissions: expected \"readonly\" or \"readwrite\"")
                }
                permissions = perm
            }
            var seconds = policy?.wait ?? 0
            if let w = opts["wait"] {
                seconds = try call.duration(w, argument: 1, what: "opts.wait",
                                            in: LuaRange(0, SignalKAccessPolicy.maxWait, unit: .seconds))
            }
            let asked = permissions, waitSeconds = seconds
            return try wait(call, "signalk request_access \(boat.label)", {
                do {
                    return try await access.request(description: description, permissions: asked, wait: waitSeconds)
                } catch let refusal as SignalKAccessRefusal {
                    throw refusal.luaError
                }
            }) { stack, state in
                stack.push(.text(state.rawValue))
                return 1
            }
        },
        "token_state": { call in
            let boat = try boat(call)
            guard let access = boat.access else {
                // connect{url=…} keeps no token: nothing to tell.
                return call.returning(.text(SignalKTokenState.absent.rawValue))
            }
            return try wait(call, "signalk token_state \(boat.label)", { await access.state() }) { stack, state in
                stack.push(.text(state.rawValue))
                return 1
            }
        },
    ] }
}

/// Runs a REST call; a 401 the token is to blame for (`GET self` with it is refused too; a
/// `readonly` token refused a PUT is not) forgets the token, and with the profile's opt-in
/// requests access, waits up to the policy's `wait` and runs the call once more. Without the
/// opt-in the `auth` error says how to get a token.
func authorized<T: Sendable>(_ access: SignalKProfileAccess?, _ rest: SignalKREST, _ operation: @Sendable () async throws -> T)
    async throws -> T
{
    do {
        return try await operation()
    } catch let error as SignalKClientError {
        guard case .unauthorized = error, let access else { throw error }
        let sent = await access.token()
        if sent != nil {
            var tokenRefused = false
            do { _ = try await rest.get("self") } catch let probe as SignalKClientError {
                if case .unauthorized = probe { tokenRefused = true }
            } catch {}
            guard tokenRefused else { throw error }  // the token is good; the call needs more permission
        }
        await access.refused(sent)
        guard let policy = access.policy else {
            var info = LuaErrorInfo.signalk(error)
            info.message += "; " + access.hint
            throw info
        }
        let state: SignalKTokenState
        do {
            state = try await access.request(description: policy.description, permissions: policy.permissions, wait: policy.wait)
        } catch let refusal as SignalKAccessRefusal {
            throw refusal.luaError
        }
        guard state == .valid else {
            throw LuaErrorInfo(code: "auth", message: "no token for [signalk.\(access.profile)] yet: the access request is "
                + state.rawValue, retryable: state == .pending, status: 401, service: "signalk")
        }
        return try await operation()
    }
}
