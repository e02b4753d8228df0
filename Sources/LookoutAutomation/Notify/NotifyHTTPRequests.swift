import Foundation
import LookoutConfig
import LookoutModules
import LookoutStore
import Lua

/// The HTTP request each HTTP channel sends, following each service's API:
/// - webhook: `POST url` (or a secret `url_env`/`url_file`) with the message as JSON
///   (`Authorization: Bearer` when `token_*` is set);
/// - ntfy: `POST url/topic` (default `https://ntfy.sh`), the text as body, `Title`, `Priority`
///   (urgent 5, warning 4, info 3) and `Tags` headers;
/// - Pushover: form `POST /1/messages.json` with `token`, `user`, `title`, `message`,
///   `priority` (urgent 2 with `retry=60` and `expire=3600`, warning 1, info 0), `timestamp`;
/// - Telegram: `POST /bot<token>/sendMessage` with JSON `{chat_id, text, disable_notification}`.
struct NotifyHTTPRequest: Sendable {
    /// The request.
    var request: HTTPPreparedRequest
    /// Secret values to remove from any message about this request (the Telegram token is in
    /// its path).
    var secrets: [String]

    /// The request for `message` on `channel`, with the episode's `ack` link if there is one
    /// (ntfy: an `Actions` http action; Pushover: `url`; Telegram: a URL button when the link is
    /// public, else a line of text; webhook: `ack_url` and `episode`).
    static func make(_ message: NotifyMessage, channel: NotifyChannel, config: HostConfig,
                     environment: [String: String], ack: NotifyAckLink? = nil) throws(LuaErrorInfo) -> NotifyHTTPRequest {
        var spec = HTTPRequestSpec()
        spec.method = "POST"
        spec.timeout = 20
        spec.maxSize = 1 << 20
        spec.followRedirects = false
        // The link's token never shows in a message about the request (a server may echo the body).
        var secrets: [String] = ack.map { [$0.url, $0.token] } ?? []
        switch channel.kind {
        case .webhook:
            // Many webhook URLs are credentials themselves (Slack, Discord, Teams): `url_env` or
            // `url_file` keep them out of the config, and their path out of every message.
            if let secretURL = try channel.secret("url", config: config, environment: environment, required: false) {
                spec.url = secretURL
                secrets.append(secretURL)
                if let path = URLComponents(string: secretURL)?.path, path.count > 1 { secrets.append(path) }
            } else {
                spec.url = try channel.setting("url", required: true)!
            }
            var body = message.webhookJSON
            if let ack {
                body["ack_url"] = ack.url
                if let episode = message.episode { body["episode"] = Int(episode) }
            }
            spec.body = try json(body)
            spec.impliedContentType = "application/json"
            if let token = try channel.secret("token", config: config, environment: environment, required: false) {
                spec.headers.append((name: "authorization", value: "Bearer " + token))
                secrets.append(token)
            }
        case .ntfy:
            let base = try channel.setting("url") ?? "https://ntfy.sh"
            let topic = try channel.setting("topic", required: true)!
            spec.url = trimmed(base) + "/" + HTTPRequestSpec.percentEncoded(topic)
            spec.body = Array(message.message.utf8)
            spec.impliedContentType = "text/plain; charset=utf-8"
            spec.headers.append((name: "Title", value: headerSafe(message.title)))
            spec.headers.append((name: "Priority", value: ["urgent": "5", "warning": "4"][message.severity] ?? "3"))
            spec.headers.append((name: "Tags", value: ["urgent": "rotating_light", "warning": "warning"][message.severity] ?? "information_source"))
            if let ack { spec.headers.append((name: "Actions", value: "http, Acknowledge, \(ack.url), method=POST, clear=true")) }
            if let token = try channel.secret("token", config: config, environment: environment, required: false) {
                spec.headers.append((name: "Authorization", value: "Bearer " + token))
                secrets.append(token)
            }
        case .pushover:
            let base = try channel.setting("url") ?? "https://api.pushover.net"
            let token = try channel.secret("token", config: config, environment: environment, required: true)!
            let user = try channel.secret("user_key", config: config, environment: environment, required: true)!
            secrets += [token, user]
            spec.url = trimmed(base) + "/1/messages.json"
            let priority = ["urgent": "2", "warning": "1"][message.severity] ?? "0"
            var form = [(name: "token", value: token), (name: "user", value: user), (name: "title", value: message.title),
                        (name: "message", value: message.message), (name: "priority", value: priority),
                        (name: "timestamp", value: String(message.time / 1000))]
            if priority == "2" { form += [(name: "retry", value: "60"), (name: "expire", value: "3600")] }
            if let ack { form += [(name: "url", value: ack.url), (name: "url_title", value: "Acknowledge")] }
            spec.body = Array(HTTPRequestSpec.formEncoded(form).utf8)
            spec.impliedContentType = "application/x-www-form-urlencoded"
        case .telegram:
            let base = try channel.setting("url") ?? "https://api.telegram.org"
            let token = try channel.secret("token", config: config, environment: environment, required: true)!
            secrets.append(token)
            spec.url = trimmed(base) + "/bot" + token + "/sendMessage"
            let chat = try channel.identifierSetting("chat_id")
            let chatValue: Any = Int64(chat) ?? chat
            var body: [String: Any] = ["chat_id": chatValue, "text": message.line, "disable_notification": message.severity == "info"]
            if let ack {
                // Telegram refuses buttons with loopback URLs: a public link is a button, else a line.
                if ack.isPublic {
                    body["reply_markup"] = ["inline_keyboard": [[["text": "Acknowledge", "url": ack.url]]]]
                } else {
                    body["text"] = message.line + "\nAcknowledge: " + ack.url
                }
            }
            spec.body = try json(body)
            spec.impliedContentType = "application/json"
        case .log, .nightscout, .signalk:
            throw LuaErrorInfo(code: "internal", message: "\(channel.kind.rawValue) is not an HTTP channel", service: "notify")
        }
        do throws(HTTPFailure) {
            return NotifyHTTPRequest(request: try spec.prepared(), secrets: secrets)
        } catch {
            throw LuaErrorInfo(code: "config", message: redact(error.luaError.message, secrets), service: "notify")
        }
    }

    /// `text` with every secret replaced by `***`.
    static func redact(_ text: String, _ secrets: [String]) -> String {
        secrets.filter { !$0.isEmpty }.reduce(text) { $0.replacingOccurrences(of: $1, with: "***") }
    }

    private static func trimmed(_ url: String) -> String {
        var url = url
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// Header values cannot hold line breaks; ntfy reads UTF-8 header values.
    private static func headerSafe(_ text: String) -> String {
        text.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
    }

    private static func json(_ object: [String: Any]) throws(LuaErrorInfo) -> [UInt8] {
        do {
            return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
        } catch {
            throw LuaErrorInfo(code: "internal", message: "cannot encode the notification: \(error)", service: "notify")
        }
    }
}

/// The ack link a notification carries (see `AckLink`), and where it points.
struct NotifyAckLink: Sendable, Equatable {
    /// The whole link.
    var url: String
    /// Its token (removed from every error message).
    var token: String
    /// Whether it is under `[serve] public_url` (else the loopback status server).
    var isPublic: Bool

    /// The base of ack links: `[serve] public_url`, else the status server of this serve (or of
    /// its parent), else `[serve] status_port` on 127.0.0.1; nil when the status server is off.
    static func base(config: HostConfig) -> (url: String, isPublic: Bool)? {
        if let url = config.servePublicURL { return (url, true) }
        if let port = ServeStatusAddress.port { return ("http://127.0.0.1:\(port)", false) }
        let configured = config.serveStatusPort
        return configured > 0 ? ("http://127.0.0.1:\(configured)", false) : nil
    }
}
