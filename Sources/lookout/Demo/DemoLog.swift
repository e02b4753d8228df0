import Foundation
import LookoutWire
import Logging
import LookoutConfig
import LookoutModules

/// The last lines the demo's scripts logged or printed, for the live view (instead of the
/// terminal, which the view redraws).
final class DemoLog: Sendable {
    private let lines = Locked<[String]>([])
    let capacity: Int

    init(capacity: Int = 8) { self.capacity = capacity }

    func add(_ line: String) {
        let c = Calendar.current.dateComponents([.hour, .minute, .second], from: Date())
        let stamped = String(format: "%02d:%02d:%02d ", c.hour ?? 0, c.minute ?? 0, c.second ?? 0) + line
        lines.withLock {
            $0.append(stamped)
            if $0.count > capacity { $0.removeFirst($0.count - capacity) }
        }
    }

    var recent: [String] { lines.withLock { $0 } }
}

/// swift-log lines into a ``DemoLog``.
struct DemoLogHandler: LogHandler {
    let log: DemoLog
    /// Each script's latest lines for the web view, if it is on.
    var lines: ScriptLogLines?
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let who = all["script"].map { "\($0)" } ?? "lookout"
        log.add("\(event.level.rawValue) \(who): \(event.message)")
        if let script = all["script"] { lines?.append(script: "\(script)", "\(event.level.rawValue) \(event.message)") }
    }
}

