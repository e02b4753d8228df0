import Foundation
import LookoutConfig

/// Acknowledging alerts from outside a script: `lookout ack ID`, the status server's
/// `POST /ack/<id>` with an ack link (``linkAck(id:query:by:key:at:)``), any Swift caller. The script's `alert` library sees the acknowledgement at
/// its next check (it reads acknowledgements from the state database every time).
///
/// An acknowledgement applies to the alert's current episode only: when the alert clears and
/// fires again, it notifies again.
///
/// ```swift
/// let acks = AlertAcks(paths: .resolve())
/// let status = try await acks.ack(id: "urgent-low", by: "anna")
/// ```
public struct AlertAcks: Sendable {
    private let open: @Sendable () throws -> any StateBackend
    /// The scripts' clock: the state folder's story clock under the demo, else the computer's.
    private let now: @Sendable () -> Date

    /// Acknowledgements in the state database at `paths`, on the scripts' clock there.
    public init(paths: LookoutPaths) {
        open = { try StateBackends.shared(paths: paths) }
        let story = StoryClock.load(paths)
        now = { story?.now() ?? Date() }
    }

    /// Acknowledgements in an open store (tests, the status server), on the computer's clock.
    public init(store: any StateBackend) {
        open = { store }
        now = { Date() }
    }

    /// Acknowledges the current episode of alert `id` by `by` (a person or a program) at `at`
    /// (now on the scripts' clock by default). The first acknowledgement of an episode wins;
    /// acknowledging again returns it unchanged.
    /// - Throws: `AlertAckError` when no script has defined the alert, or it is not alerting
    ///   (state `ok` or `unknown`); `StateStoreError` when the database cannot be used.
    @discardableResult
    public func ack(id: String, by: String, at: Date? = nil) async throws -> AlertStatus {
        try await open().ackAlert(id: id, by: by.isEmpty ? "someone" : by, at: at ?? now(), episode: nil)
    }

    /// The answer for an HTTP callback (`POST /ack/<id>?by=NAME` on the status server): 200 with
    /// `{"id", "episode", "acked_by", "state"}`, 404 for an unknown alert, 409 when it is not
    /// alerting, 503 when the database cannot be used; errors as `{"error": "…"}`.
    public func httpAck(id: String, by: String, at: Date? = nil) async -> (status: Int, json: String) {
        let encode = Self.encode
        do {
            let status = try await ack(id: id, by: by, at: at)
            return (200, encode(["id": status.id, "episode": Int(status.episode), "acked_by": status.ackedBy ?? by, "state": status.state]))
        } catch let error as AlertAckError {
            if case .unknown = error { return (404, encode(["error": error.description])) }
            return (409, encode(["error": error.description]))
        } catch {
            return (503, encode(["error": String(describing: error)]))
        }
    }

    /// The answer for an ack link (`POST /ack/<id>?episode=E&expires=X&token=T` on the status
    /// server): the token checked with `key` and the expiry with `at`, then episode E acknowledged,
    /// once. 200 as `httpAck`; 403 for a missing, malformed, invalid or expired link; 409 for another
    /// episode, one acknowledged already, or an alert not alerting; 404 for an unknown alert.
    public func linkAck(id: String, query: String?, by: String, key: AckLinkKey, at: Date = Date()) async -> (status: Int, json: String) {
        let link: AckLink
        do throws(AckLinkError) {
            guard let parsed = try AckLink.parse(alert: id, query: query) else { throw .missing }
            try key.verify(parsed, now: at)
            link = parsed
        } catch {
            return (403, Self.encode(["error": error.description]))
        }
        do {
            // The link's expiry is real time; the acknowledgement is stamped on the scripts' clock.
            let status = try await open().ackAlert(id: id, by: by.isEmpty ? "someone" : by, at: now(), episode: link.episode)
            return (200, Self.encode(["id": status.id, "episode": Int(status.episode), "acked_by": status.ackedBy ?? by,
                                      "state": status.state]))
        } catch let error as AlertAckError {
            if case .unknown = error { return (404, Self.encode(["error": error.description])) }
            return (409, Self.encode(["error": error.description, "code": error.code]))
        } catch {
            return (503, Self.encode(["error": String(describing: error)]))
        }
    }

    static func encode(_ object: [String: Any]) -> String {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The shortest and longest snooze from outside a script (`lookout ack --snooze`, the web view).
    public static let snoozeRange: ClosedRange<TimeInterval> = 60...(24 * 3600)

    /// Snoozes the current episode of alert `id` for `duration` seconds (within ``snoozeRange``),
    /// by `by`, from now on the scripts' clock: the script that checks the alert mutes its
    /// notifications until then (state `snoozed`) and starts its escalation again if it still fires
    /// after. A snooze never outlives its episode (the next episode notifies), urgent or not.
    /// - Throws: `AlertAckError` when no script has defined the alert or it is not alerting, or the
    ///   duration is outside ``snoozeRange``; `StateStoreError` when the database cannot be used.
    @discardableResult
    public func snooze(id: String, by: String, for duration: TimeInterval) async throws -> AlertStatus {
        guard Self.snoozeRange.contains(duration) else { throw AlertAckError.snoozeDuration(id, seconds: duration) }
        let at = now()
        return try await open().snoozeAlert(id: id, by: by.isEmpty ? "someone" : by, at: at, until: at.addingTimeInterval(duration))
    }

    /// The answer for a snooze over HTTP (the web view): as ``httpAck(id:by:at:)``, with
    /// `snoozed_until` (epoch seconds) instead of `acked_by`; 400 for a duration out of range.
    public func httpSnooze(id: String, by: String, for duration: TimeInterval) async -> (status: Int, json: String) {
        do {
            let status = try await snooze(id: id, by: by, for: duration)
            return (200, Self.encode(["id": status.id, "episode": Int(status.episode), "snoozed_by": status.snoozedBy ?? by,
                                      "snoozed_until": status.snoozedUntil?.timeIntervalSince1970 ?? 0, "state": status.state]))
        } catch let error as AlertAckError {
            switch error {
            case .unknown: return (404, Self.encode(["error": error.description]))
            case .snoozeDuration: return (400, Self.encode(["error": error.description]))
            default: return (409, Self.encode(["error": error.description]))
            }
        } catch {
            return (503, Self.encode(["error": String(describing: error)]))
        }
    }

    /// Every alert a script has checked, by id, with its acknowledgement if the current episode has one.
    public func list() async throws -> [AlertStatus] {
        try await open().alertStatuses()
    }
}

/// What the state database knows of one alert (as its script last checked it).
public struct AlertStatus: Sendable, Equatable, Codable {
    /// States in which an alert is alerting (and can be acknowledged).
    public static let alertingStates: Set<String> = ["firing", "stale", "acked", "snoozed"]

    /// The alert's id (unique across scripts).
    public var id: String
    /// The script that defined it.
    public var script: String
    /// Its title.
    public var title: String
    /// `urgent`, `warning` or `info`.
    public var severity: String
    /// `ok`, `unknown` (not enough data to judge), `firing`, `stale` (data too old or missing),
    /// `acked` or `snoozed`.
    public var state: String
    /// When the state began (the script's clock).
    public var since: Date
    /// The alerting episode (counts up each time the alert starts firing or goes stale).
    public var episode: Int64
    /// Who acknowledged the current episode.
    public var ackedBy: String?
    /// When.
    public var ackedAt: Date?
    /// Who snoozed the current episode from outside its script (`lookout ack --snooze`, the web view).
    public var snoozedBy: String?
    /// When.
    public var snoozedAt: Date?
    /// Until when (the scripts' clock); the script mutes the episode's notifications until then.
    public var snoozedUntil: Date?
    /// When the script last checked the alert.
    public var updatedAt: Date
    /// Why the data puts the alert in its state, as the script last judged it ("pending: below
    /// 70 for 9 min of 15 min (last 64, 1 min ago)"); nil before the first check.
    public var why: String?

    /// Whether the alert is alerting now (firing or stale, acknowledged or snoozed or not).
    public var isAlerting: Bool { Self.alertingStates.contains(state) }

    /// Creates a status.
    public init(id: String, script: String, title: String, severity: String, state: String, since: Date, episode: Int64,
                ackedBy: String? = nil, ackedAt: Date? = nil, updatedAt: Date, why: String? = nil,
                snoozedBy: String? = nil, snoozedAt: Date? = nil, snoozedUntil: Date? = nil) {
        self.id = id; self.script = script; self.title = title; self.severity = severity; self.state = state
        self.since = since; self.episode = episode; self.ackedBy = ackedBy; self.ackedAt = ackedAt; self.updatedAt = updatedAt
        self.why = why; self.snoozedBy = snoozedBy; self.snoozedAt = snoozedAt; self.snoozedUntil = snoozedUntil
    }
}

/// Why an alert cannot be acknowledged.
public enum AlertAckError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No script has checked an alert with this id.
    case unknown(String, known: [String])
    /// The alert is not firing or stale.
    case notAlerting(String, state: String)
    /// An ack link's episode is not the alert's current one.
    case otherEpisode(String, link: Int64, current: Int64)
    /// An ack link's episode has been acknowledged already (a link acknowledges once).
    case alreadyAcked(String, episode: Int64, by: String)
    /// A snooze shorter or longer than ``AlertAcks/snoozeRange``.
    case snoozeDuration(String, seconds: TimeInterval)

    public var description: String {
        switch self {
        case .unknown(let id, let known):
            return "no alert '\(id)'" + (known.isEmpty ? " (no script has checked an alert yet)" : " (alerts: \(known.joined(separator: ", ")))")
        case .notAlerting(let id, let state):
            return "alert '\(id)' is not firing (state: \(state)); nothing to acknowledge"
        case .otherEpisode(let id, let link, let current):
            return "this link is for episode \(link) of alert '\(id)', which is now in episode \(current); "
                + "use the link of the newest notification (or `lookout ack \(id)`)"
        case .alreadyAcked(let id, let episode, let by):
            return "episode \(episode) of alert '\(id)' is already acknowledged (by \(by))"
        case .snoozeDuration(let id, let seconds):
            return "cannot snooze alert '\(id)' for \(Int(seconds)) s: a snooze lasts from 1 minute to 24 hours"
        }
    }

    /// The code scripts see: `not_found` or `not_alerting`.
    public var code: String {
        switch self {
        case .unknown: return "not_found"
        case .notAlerting: return "not_alerting"
        case .otherEpisode: return "other_episode"
        case .alreadyAcked: return "already_acked"
        case .snoozeDuration: return "invalid_duration"
        }
    }
}
