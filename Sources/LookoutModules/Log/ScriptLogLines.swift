import Foundation
import LookoutWire

/// The recent output lines of each served script (`print`, `log.*`, warnings), for the web view:
/// at most `perScript` lines of at most `lineLimit` characters per script, the oldest dropped
/// first, and at most `scriptLimit` scripts (a name not seen before past that is not kept).
/// Thread-safe; anything may append. Lines are kept as the script wrote them: whoever shows them
/// redacts (`WebSnapshotSource` does, with every secret the configuration reaches).
///
/// ```swift
/// let lines = ScriptLogLines()
/// lines.append(script: "alerts.lua", "14:03:07 info  alerts.lua: low → firing")
/// lines.recent(script: "alerts.lua")  // ["14:03:07 info  alerts.lua: low → firing"]
/// ```
public final class ScriptLogLines: Sendable {
    /// Lines kept per script.
    public let perScript: Int
    /// Characters kept of one line (longer lines end in `…`).
    public let lineLimit: Int
    /// Scripts kept.
    public let scriptLimit: Int

    private struct Ring {
        var lines: [String] = []
        var next = 0
        /// Lines appended since the script's first (so a page can tell new lines from old ones).
        var count = 0
    }

    private let rings = Locked<[String: Ring]>([:])

    /// An empty buffer.
    public init(perScript: Int = 50, lineLimit: Int = 500, scriptLimit: Int = 1_000) {
        self.perScript = max(1, perScript)
        self.lineLimit = max(16, lineLimit)
        self.scriptLimit = max(1, scriptLimit)
    }

    /// Adds one line (or several, split at newlines) of `script`.
    public func append(script: String, _ text: String) {
        let parts = text.split(separator: "\n", omittingEmptySubsequences: true).map { part -> String in
            part.count > lineLimit ? String(part.prefix(lineLimit - 1)) + "…" : String(part)
        }
        guard !parts.isEmpty else { return }
        rings.withLock { rings in
            guard rings[script] != nil || rings.count < scriptLimit else { return }
            var ring = rings[script] ?? Ring()
            for part in parts.suffix(perScript) {
                if ring.lines.count < perScript {
                    ring.lines.append(part)
                } else {
                    ring.lines[ring.next] = part
                    ring.next = (ring.next + 1) % perScript
                }
            }
            ring.count += parts.count
            rings[script] = ring
        }
    }

    /// The kept lines of `script`, oldest first.
    public func recent(script: String) -> [String] {
        rings.withLock { rings in
            guard let ring = rings[script] else { return [] }
            return Array(ring.lines[ring.next...] + ring.lines[..<ring.next])
        }
    }

    /// How many lines `script` has written in all (kept or not).
    public func total(script: String) -> Int { rings.withLock { $0[script]?.count ?? 0 } }
}
