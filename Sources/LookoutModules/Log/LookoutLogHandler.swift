import Foundation
import Logging

/// Log lines on standard error: `14:03:07 info  alerts.lua: message`.
public struct LookoutLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let clock: @Sendable () -> Date
    private let tap: (@Sendable (_ script: String, _ line: String) -> Void)?

    /// A handler for `label` showing `level` and above; times come from `clock` (a script's
    /// `engine.clock.now`, virtual under `lookout test`). `tap` also gets each line a script logs
    /// (`log.*`, with the `script` metadata), as written to standard error (`serve` keeps them
    /// for the web view).
    public init(label: String, level: Logger.Level, clock: @escaping @Sendable () -> Date = { Date() },
                tap: (@Sendable (_ script: String, _ line: String) -> Void)? = nil) {
        self.label = label
        self.logLevel = level
        self.clock = clock
        self.tap = tap
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let who = all["script"].map { "\($0)" } ?? label
        // 24-hour local time whatever the locale (the date style's hour follows the locale's 12/24 h).
        let c = Calendar.current.dateComponents([.hour, .minute, .second], from: clock())
        let time = String(format: "%02d:%02d:%02d", c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
        let level = event.level.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
        // The rest of the metadata (a Garmin retry's path and status) follows the message.
        let details = all.filter { $0.key != "script" }.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        let line = "\(time) \(level) \(who): \(event.message)\(details)"
        FileHandle.standardError.write(Data((line + "\n").utf8))
        if let tap, let script = all["script"] { tap("\(script)", line) }
    }
}
