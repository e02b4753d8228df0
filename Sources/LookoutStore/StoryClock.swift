import Foundation
import LookoutConfig

/// A clock that runs faster than the computer's, from a start: the demo's story time, where one
/// CGM reading every few real seconds stands for five minutes. The demo writes it into its state
/// folder (`story-clock.json`), so that everything acting on that state from outside the demo's
/// process (`lookout ack`, `ack --list`) uses the same clock as the scripts: an acknowledgement
/// stamped in real time would look hours old to a script on story time and expire at once.
public struct StoryClock: Sendable, Equatable, Codable {
    /// When the story started (real and story time agree there).
    public let start: Date
    /// Story seconds per real second.
    public let factor: Double

    /// A clock running `factor` times faster than the computer's from `start`.
    public init(start: Date, factor: Double) {
        self.start = start
        self.factor = factor
    }

    /// Story time at real time `real` (now by default).
    public func now(real: Date = Date()) -> Date { start.addingTimeInterval(real.timeIntervalSince(start) * factor) }

    /// The file a state folder's story clock lives in.
    public static func file(_ paths: LookoutPaths) -> String { paths.stateDirectory + "/story-clock.json" }

    /// Writes this clock into the state folder at `paths`.
    public func save(_ paths: LookoutPaths) throws {
        try JSONEncoder().encode(self).write(to: URL(fileURLWithPath: Self.file(paths)), options: .atomic)
    }

    /// The story clock of the state folder at `paths`, or nil when it runs on real time (no file,
    /// or one that cannot be read: a broken file must not stop `lookout ack`).
    public static func load(_ paths: LookoutPaths) -> StoryClock? {
        guard let data = FileManager.default.contents(atPath: file(paths)),
              let clock = try? JSONDecoder().decode(StoryClock.self, from: data),
              clock.factor.isFinite, clock.factor > 0
        else { return nil }
        return clock
    }
}
