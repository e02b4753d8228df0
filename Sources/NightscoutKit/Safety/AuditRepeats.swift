import Foundation

/// When a refusal is counted on an earlier audit row instead of written as a new one.
///
/// A script can ask for refused commands as fast as the guard answers; writing each as its own
/// row would let it fill the disk with a log nobody may delete. Every backend applies these
/// rules when it appends a refusal (`refused` or `dry-run` phase): the refusal goes onto an
/// earlier row's repeat counter (kept beside the append-only log, never in it) when
///
/// * an identical refusal (same site, source, code, reason, phase, detail and command) was
///   written less than `window` ago, or
/// * `rowsPerWindow` refusals with the same site, source, code and phase were already written
///   in the last `window` (a script varying its requests): it counts on the newest of them.
///
/// Allowed commands and their outcomes are always written in full.
public enum AuditRepeats {
    /// How far back a refusal looks for a row to count on.
    public static let window: TimeInterval = 3600
    /// Rows of one site, source, refusal code and phase written per `window` before further
    /// ones are counted.
    public static let rowsPerWindow = 30
    /// How many of the site's newest refusal rows of the window a backend needs to look at.
    public static let candidates = 500

    /// Whether `entry` may be counted instead of written (a refusal: no ticket, nothing reserved).
    public static func mayFold(_ entry: AuditEntry) -> Bool {
        entry.verdict == .refused && entry.ticketID == nil && (entry.phase == .refused || entry.phase == .dryRun)
    }

    /// Which of `recent` (the site's refusal rows of the last `window`, newest first, each with
    /// its backend key) `entry` is counted on; nil: write it as a row.
    public static func target<Key>(for entry: AuditEntry, among recent: [(key: Key, entry: AuditEntry)]) -> Key? {
        guard mayFold(entry) else { return nil }
        let earliest = entry.time - window
        let live = recent.filter { $0.entry.time >= earliest && $0.entry.site == entry.site && mayFold($0.entry) }
        if let same = live.first(where: { isRepeat(entry, of: $0.entry) }) { return same.key }
        let alike = live.filter { isAlike(entry, $0.entry) }
        return alike.count >= rowsPerWindow ? alike.first?.key : nil
    }

    /// Same site, source, code, reason, phase, detail and command.
    public static func isRepeat(_ entry: AuditEntry, of earlier: AuditEntry) -> Bool {
        isAlike(entry, earlier) && entry.reason == earlier.reason && entry.detail == earlier.detail
            && entry.command == earlier.command
    }

    /// Same site, source, refusal code and phase.
    static func isAlike(_ entry: AuditEntry, _ other: AuditEntry) -> Bool {
        entry.site == other.site && entry.source == other.source && entry.reasonCode == other.reasonCode
            && entry.phase == other.phase && entry.verdict == other.verdict
    }
}
