import Foundation
import LookoutConfig
import LookoutStore
import Lua

/// One notification channel, configured as a profile `[notify.NAME]` with `type = "…"`.
///
/// Secrets (`token_env`/`token_file`, `user_key_env`/`user_key_file`) are resolved only when a
/// message is sent, never stored with queued messages, and never shown.
struct NotifyChannel: Sendable {
    /// What a channel delivers to.
    enum Kind: String, Sendable, CaseIterable {
        case log, webhook, ntfy, pushover, telegram, nightscout, signalk
    }

    /// The profile name.
    let name: String
    /// The delivery kind.
    public let kind: Kind
    /// `dry_run = true`: messages are logged, never sent.
    let dryRun: Bool
    /// The profile (settings without secrets).
    public let profile: HostConfig.Profile

    /// The channel `[notify.NAME]` of `config`.
    /// - Throws: a `config` error naming the profile (and the known ones) or the bad key.
    static func named(_ name: String, config: HostConfig) throws(LuaErrorInfo) -> NotifyChannel {
        guard let profile = config.profile(service: "notify", name: name) else {
            let known = config.profiles(service: "notify")
            throw LuaErrorInfo(code: "config", message: "no [notify.\(name)] channel in \(config.fileName)"
                + (known.isEmpty ? "" : " (channels: \(known.joined(separator: ", ")))"), service: "notify")
        }
        do throws(ConfigError) {
            guard let text = try profile.string("type") else {
                throw profile.error(key: "type", "required: one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard let kind = Kind(rawValue: text) else {
                let known = Kind.allCases.map(\.rawValue)
                let guess = ConfigWording.suggestion(for: text, among: known).map { " (did you mean \"\($0)\"?)" } ?? ""
                throw profile.error(key: "type", "expected one of \(known.joined(separator: ", ")), got \"\(text)\"\(guess)")
            }
            return NotifyChannel(name: name, kind: kind, dryRun: try profile.bool("dry_run") ?? false, profile: profile)
        } catch {
            throw LuaErrorInfo(code: "config", message: error.description, service: "notify")
        }
    }

    /// A string setting, or a `config` error when it is missing and required.
    func setting(_ key: String, required: Bool = false) throws(LuaErrorInfo) -> String? {
        do throws(ConfigError) {
            let value = try profile.string(key)
            if value == nil && required { throw profile.error(key: key, "required for type = \"\(kind.rawValue)\"") }
            return value
        } catch {
            throw LuaErrorInfo(code: "config", message: error.description, service: "notify")
        }
    }

    /// A setting that may be a string or an integer (Telegram's `chat_id`).
    func identifierSetting(_ key: String) throws(LuaErrorInfo) -> String {
        switch profile[key] {
        case .integer(let n)?: return String(n)
        case .string(let s)? where !s.isEmpty: return s
        default:
            throw LuaErrorInfo(code: "config", message: profile.error(key: key, "required: a number or a string").description,
                               service: "notify")
        }
    }

    /// The secret `name` (`NAME_env` / `NAME_file`), or a `config` error when missing and required.
    func secret(_ secret: String, config: HostConfig, environment: [String: String], required: Bool) throws(LuaErrorInfo) -> String? {
        do throws(ConfigError) {
            let value = try config.secret(service: "notify", profile: name, name: secret, environment: environment)?.value
            if value == nil && required {
                throw profile.error(key: secret + "_env", "required for type = \"\(kind.rawValue)\": set \(secret)_env or \(secret)_file")
            }
            return value
        } catch {
            throw LuaErrorInfo(code: "config", message: error.description, service: "notify")
        }
    }
}

extension NotifyChannel {
    /// Checks channel `name` as sending would, without sending: its type, the settings and
    /// secrets its type needs, its URL. Returns what it delivers to, for people (never a secret).
    /// - Throws: the `config` error sending would meet.
    static func validate(_ name: String, config: HostConfig, environment: [String: String]) throws(LuaErrorInfo) -> String {
        let channel = try named(name, config: config)
        switch channel.kind {
        case .log:
            return "log channel"
        case .nightscout:
            let site = try channel.setting("site", required: true)!
            guard config.profile(service: "nightscout", name: site) != nil else {
                throw LuaErrorInfo(code: "config", message: channel.profile.error(key: "site", "no [nightscout.\(site)] profile").description,
                                   service: "notify")
            }
            return "announcements on nightscout.\(site)"
        case .signalk:
            let server = try channel.setting("server", required: true)!
            guard config.profile(service: "signalk", name: server) != nil else {
                throw LuaErrorInfo(code: "config", message: channel.profile.error(key: "server", "no [signalk.\(server)] profile").description,
                                   service: "notify")
            }
            return "notifications on signalk.\(server)"
        case .webhook, .ntfy, .pushover, .telegram:
            let probe = NotifyMessage(id: "doctor", channel: name, title: "doctor", message: "doctor", severity: "info", kind: "message",
                                      time: 0)
            let request = try NotifyHTTPRequest.make(probe, channel: channel, config: config, environment: environment)
            let host = URL(string: request.request.url)?.host.map { " via \($0)" } ?? ""
            return "\(channel.kind.rawValue) channel\(host)" + (channel.dryRun ? " (dry_run: nothing is sent)" : "")
        }
    }
}
