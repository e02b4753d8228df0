import Foundation
import LookoutConfig

/// Acknowledging alerts from outside a script: `lookout ack ID`, the status server's
/// `POST /ack/<id>`, any Swift caller. The script's `alert` library sees the acknowledgement at
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

    /// Acknowledgements in the state database at `paths`.
    public init(paths: LookoutPaths) { open = { try StateBackends.shared(paths: paths) } }

    /// Acknowledgements in an open store (tests, the status server).
    public init(store: any StateBackend) { open = { store } }

    /// Acknowledges the current episode of alert `id` by `by` (a person or a program). The first
    /// acknowledgement of an episode wins; acknowledging again returns it unchanged.
    /// - Throws: `AlertAckError` when no script has defined the alert, or it is not alerting
    ///   (state `ok` or `unknown`); `StateStoreError` when the database cannot be used.
    @discardableResult
    public func ack(id: String, by: String, at: Date = Date()) async throws -> AlertStatus {
        try await open().ackAlert(id: id, by: by.isEmpty ? "someone" : by, at: at)
    }

    /// The answer for an HTTP callback (`POST /ack/<id>?by=NAME` on the status server): 200 with
    /// `{"id", "episode", "acked_by", "state"}`, 404 for an unknown alert, 409 when it is not
    /// alerting, 503 when the database cannot be used; errors as `{"error": "…"}`.
    public func httpAck(id: String, by: String, at: Date = Date()) async -> (status: Int, json: String) {
        func encode(_ object: [String: Any]) -> String {
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
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
    /// When the script last checked the alert.
    public var updatedAt: Date

    /// Whether the alert is alerting now (firing or stale, acknowledged or snoozed or not).
    public var isAlerting: Bool { Self.alertingStates.contains(state) }

    /// Creates a status.
    public init(id: String, script: String, title: String, severity: String, state: String, since: Date, episode: Int64,
                ackedBy: String? = nil, ackedAt: Date? = nil, updatedAt: Date) {
        self.id = id; self.script = script; self.title = title; self.severity = severity; self.state = state
        self.since = since; self.episode = episode; self.ackedBy = ackedBy; self.ackedAt = ackedAt; self.updatedAt = updatedAt
    }
}

/// Why an alert cannot be acknowledged.
public enum AlertAckError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No script has checked an alert with this id.
    case unknown(String, known: [String])
    /// The alert is not firing or stale.
    case notAlerting(String, state: String)

    public var description: String {
        switch self {
        case .unknown(let id, let known):
            return "no alert '\(id)'" + (known.isEmpty ? " (no script has checked an alert yet)" : " (alerts: \(known.joined(separator: ", ")))")
        case .notAlerting(let id, let state):
            return "alert '\(id)' is not firing (state: \(state)); nothing to acknowledge"
        }
    }

    /// The code scripts see: `not_found` or `not_alerting`.
    public var code: String {
        switch self {
        case .unknown: return "not_found"
        case .notAlerting: return "not_alerting"
        }
    }
}
