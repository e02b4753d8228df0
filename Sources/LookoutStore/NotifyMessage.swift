import Foundation

/// One notification as queued: what to say, never how to authenticate (secrets are read from
/// the channel's profile when it is sent).
public struct NotifyMessage: Sendable, Codable, Equatable {
    /// The outbox id: given by the caller (an alert makes one per alert, episode, notification and
    /// channel, so queuing it again after a crash does not send it twice) or made once.
    public var id: String
    /// The channel name.
    public var channel: String
    /// A short title.
    public var title: String
    /// The text.
    public var message: String
    /// `urgent`, `warning` or `info`.
    public var severity: String
    /// The alert it is about, if any.
    public var alertID: String?
    /// The alert's episode it is about, if any (the host adds that episode's ack link when it sends).
    public var episode: Int64?
    /// Why it was sent: `firing`, `stale`, `escalated`, `repeat`, `resolved`, or `message`.
    public var kind: String
    /// When it was made (epoch ms, the script's clock).
    public var time: Int64
    /// The script that sent it.
    public var source: String?
    /// A Signal K notification state overriding the one the severity gives.
    public var state: String?

    enum CodingKeys: String, CodingKey {
        case id, channel, title, message, severity, kind, time, source, state, episode
        case alertID = "alert_id"
    }

    /// The severities.
    public static let severities: Set<String> = ["urgent", "warning", "info"]

    /// The time as ISO 8601 (UTC, milliseconds).
    public var isoTime: String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(time) / 1000))
    }

    /// `title: message` (or just the message when it already starts with the title).
    public var line: String { message.hasPrefix(title) || title.isEmpty ? message : "\(title): \(message)" }

    /// The JSON a webhook receives.
    public var webhookJSON: [String: Any] {
        var body: [String: Any] = ["id": id, "channel": channel, "title": title, "message": message, "severity": severity,
                                   "kind": kind, "time": isoTime]
        if let alertID { body["alert_id"] = alertID }
        if let source { body["source"] = source }
        return body
    }

    /// Makes a value from its parts.
    public init(id: String, channel: String, title: String, message: String, severity: String, alertID: String? = nil, kind: String, time: Int64, source: String? = nil, state: String? = nil, episode: Int64? = nil) {
        self.id = id
        self.channel = channel
        self.title = title
        self.message = message
        self.severity = severity
        self.alertID = alertID
        self.kind = kind
        self.time = time
        self.source = source
        self.state = state
        self.episode = episode
    }
}
