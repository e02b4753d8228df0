import Foundation
import LookoutWire
import LookoutConfig

/// How each served script and each named component (a Signal K stream, a bridge, an outbox) is
/// doing, for `lookout status` and the status endpoint. Thread-safe; anything may report.
///
/// ```swift
/// health.updateScript("alerts.lua") { $0.state = .running }
/// health.updateComponent("signalk:boat", script: "bridge.lua") { $0.connected = true; $0.lastSuccess = now }
/// ```
public final class HealthRegistry: Sendable {
    /// Where a script or component is in its life.
    public enum State: String, Sendable, Codable {
        /// Being loaded.
        case starting
        /// Loaded, with schedules, timers or tasks alive.
        case running
        /// Ended on its own without error (nothing left to do).
        case finished
        /// Failed; waiting for its restart (see `nextRestart`).
        case crashed
        /// Stopped by the host (reload, shutdown) or after too many failures.
        case stopped
        /// Stuck past its limits where they could not stop it; its state was abandoned and it
        /// stays stopped until its file changes (see `lastError` for the limit).
        case quarantined
        /// A component that works.
        case ok
        /// A component that does not work now (see `lastError`).
        case failing
    }

    /// One schedule job as health reports it.
    public struct Job: Sendable, Codable, Equatable {
        /// The job's name.
        public var name: String
        /// `every`, `cron` or `at`.
        public var kind: String
        /// The schedule as written.
        public var spec: String
        /// The next run, if known.
        public var next: Date?
        /// When the last run started.
        public var lastRun: Date?
        /// Whether the last run ended without error.
        public var lastOK: Bool?
        /// The last run's error (first line), if it failed.
        public var lastError: String?
        /// Runs started in this process.
        public var runs: Int
        /// Due runs not started because the previous run was still going or the run was missed.
        public var skipped: Int

        /// Creates a job entry.
        public init(name: String, kind: String, spec: String, next: Date? = nil, lastRun: Date? = nil,
                    lastOK: Bool? = nil, lastError: String? = nil, runs: Int = 0, skipped: Int = 0) {
            self.name = name
            self.kind = kind
            self.spec = spec
            self.next = next
            self.lastRun = lastRun
            self.lastOK = lastOK
            self.lastError = lastError
            self.runs = runs
            self.skipped = skipped
        }

        enum CodingKeys: String, CodingKey {
            case name, kind, spec, next, runs, skipped
            case lastRun = "last_run", lastOK = "last_ok", lastError = "last_error"
        }
    }

    /// The health of a script or a component.
    public struct Entry: Sendable, Codable, Equatable {
        /// The script file name, or the component's name (`signalk:boat`).
        public var name: String
        /// `script` or `component`.
        public var kind: String
        /// For a component, the script that owns it.
        public var script: String?
        /// Where it is.
        public var state: State
        /// When it last did its work without error (a job run, a message received).
        public var lastSuccess: Date?
        /// The last error, in plain words (one line; the traceback is in `traceback`).
        public var lastError: String?
        /// When `lastError` happened.
        public var lastErrorAt: Date?
        /// The traceback of the last error, if it had one.
        public var traceback: String?
        /// The next scheduled run (the earliest of its jobs).
        public var nextRun: Date?
        /// Items waiting in an outbox.
        public var outboxDepth: Int?
        /// Whether a stream or connection is up.
        public var connected: Bool?
        /// Restarts after crashes since serve started.
        public var restarts: Int
        /// When the next restart happens (while crashed).
        public var nextRestart: Date?
        /// Errors reported since the script (re)started.
        public var errors: Int
        /// The script's schedule jobs.
        public var jobs: [Job]
        /// Free-form detail (`pid 1234`, `memory 2.1 MiB`).
        public var detail: String?
        /// A running script that only waits for its clock (timers, schedules, `sleep`): nothing
        /// runs, nothing waits for the network or an event. Nil when not known (not running).
        public var sleeping: Bool?

        /// A new entry.
        public init(name: String, kind: String, script: String? = nil, state: State) {
            self.name = name
            self.kind = kind
            self.script = script
            self.state = state
            restarts = 0
            errors = 0
            jobs = []
        }

        /// Forgets the last error once the script runs without error again (the count stays in `errors`).
        public mutating func clearLastError() {
            lastError = nil
            lastErrorAt = nil
            traceback = nil
        }

        enum CodingKeys: String, CodingKey {
            case name, kind, script, state, connected, restarts, errors, jobs, detail, traceback, sleeping
            case lastSuccess = "last_success", lastError = "last_error", lastErrorAt = "last_error_at"
            case nextRun = "next_run", outboxDepth = "outbox_depth", nextRestart = "next_restart"
        }
    }

    private let entries = Locked<[String: Entry]>([:])

    /// An empty registry.
    public init() {}

    /// Changes (creating if needed) the entry of a script.
    public func updateScript(_ name: String, _ change: (inout Entry) -> Void) {
        update(key: "script:" + name, default: Entry(name: name, kind: "script", state: .starting), change)
    }

    /// Changes (creating if needed) the entry of a component, such as `signalk:boat`.
    public func updateComponent(_ name: String, script: String? = nil, _ change: (inout Entry) -> Void) {
        update(key: "component:" + name, default: Entry(name: name, kind: "component", script: script, state: .ok), change)
    }

    private func update(key: String, default entry: Entry, _ change: (inout Entry) -> Void) {
        entries.withLock { entries in
            var value = entries[key] ?? entry
            change(&value)
            entries[key] = value
        }
    }

    /// Forgets a script (and the components it owns).
    public func removeScript(_ name: String) {
        entries.withLock { entries in
            entries["script:" + name] = nil
            entries = entries.filter { $0.value.script != name }
        }
    }

    /// Forgets a component.
    public func removeComponent(_ name: String) {
        entries.withLock { $0["component:" + name] = nil }
    }

    /// The entry of a script, if any.
    public func script(_ name: String) -> Entry? { entries.withLock { $0["script:" + name] } }

    /// Every entry: scripts first, then components, each by name.
    public func snapshot() -> [Entry] {
        entries.withLock { Array($0.values) }.sorted { ($0.kind == "script" ? 0 : 1, $0.name) < ($1.kind == "script" ? 0 : 1, $1.name) }
    }

    /// The snapshot as the JSON of `GET /status` and the status file: `{"time":…, "entries":[…]}`,
    /// dates as ISO 8601 text.
    public func json(now: Date, extra: [String: String] = [:]) -> Data {
        let document = HealthDocument(time: now, info: extra, entries: snapshot())
        return (try? HealthDocument.encoder.encode(document)) ?? Data("{}".utf8)
    }
}

/// The status document (`GET /status`, `serve-status.json`).
public struct HealthDocument: Sendable, Codable {
    /// When it was made.
    public var time: Date
    /// About the server: `pid`, `status_url`, `started`.
    public var info: [String: String]
    /// Scripts and components.
    public var entries: [HealthRegistry.Entry]

    /// Creates a document.
    public init(time: Date, info: [String: String], entries: [HealthRegistry.Entry]) {
        self.time = time
        self.info = info
        self.entries = entries
    }

    /// ISO 8601 dates, sorted keys.
    public static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    /// Reads a document written by `encoder`.
    public static func decode(_ data: Data) throws -> HealthDocument {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(HealthDocument.self, from: data)
    }
}
