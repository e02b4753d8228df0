import Foundation
import LookoutWire
import LookoutConfig

/// What happens to actions that reach outside the host: notifications, Nightscout uploads and
/// remote commands, Signal K PUTs and published deltas. Live runs send them; `lookout test` and
/// dry runs record them instead, so an automation can be tried without waking anyone.
public enum SideEffects: Sendable {
    /// Send for real.
    case live
    /// Record into the log; send nothing.
    case record(SideEffectLog)

    /// The log when recording, else `nil`.
    public var log: SideEffectLog? {
        if case .record(let log) = self { return log }
        return nil
    }
}

/// One action that would have reached outside.
public struct SideEffect: Sendable, Codable, Equatable {
    /// When (the script's clock).
    public var time: Date
    /// What kind: `notify`, `nightscout.upload`, `nightscout.remote`, `signalk.put`, `signalk.delta`, …
    public var kind: String
    /// Where to: a channel or profile name, a site, a path.
    public var target: String
    /// One line for a timeline, never containing a secret.
    public var summary: String
    /// Further fields (title, severity, alert id, value, …), never secrets.
    public var details: [String: String]

    /// Creates an entry.
    public init(time: Date, kind: String, target: String, summary: String, details: [String: String] = [:]) {
        self.time = time
        self.kind = kind
        self.target = target
        self.summary = summary
        self.details = details
    }
}

/// The recorded side effects of a run, in order; safe to share between tasks and threads.
public final class SideEffectLog: Sendable {
    private let entries = Locked<[SideEffect]>([])

    /// An empty log.
    public init() {}

    /// Records one action.
    public func append(_ effect: SideEffect) { entries.withLock { $0.append(effect) } }

    /// Everything recorded so far.
    public var all: [SideEffect] { entries.withLock { $0 } }
}
