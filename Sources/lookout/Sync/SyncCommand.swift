import ArgumentParser
import Foundation
import LookoutWire
import Lua
import NightscoutKit
import LookoutModules

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `lookout sync PROFILE [COLLECTION…] [--full] [--from TIME] [--to TIME]`: mirrors a site's
/// collections into the state database, where scripts read them with `home:mirror(…)`.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Mirror a Nightscout site's collections into the local state database.",
        discussion: """
            Reads what changed since the last sync (API v3 history, which needs an access token) and stores it page by page; an interrupted sync (Ctrl-C, lost network) keeps every whole page and resumes from there. Scripts read the mirror offline with home:mirror("entries", {…}).

            --full also reads a date range by search (through API v1 for an API-secret profile) to find documents history never shows (those written through API v1) and mirrored documents the server no longer has. TIME is an ISO date or time (2024-05-01, 2024-05-01T10:00:00Z) or a duration back from now (30d, 12h). --from or --to imply --full; the range defaults to everything up to now.

            Exit status: 0 done, 1 a sync failed, 2 usage or configuration error, 130 interrupted.
            """)

    /// What a bare `lookout sync PROFILE` mirrors.
    static let defaultCollections: [V3Collection] = [.entries, .treatments, .devicestatus, .profile]

    @Argument(help: "The config profile ([nightscout.NAME] in config.toml).")
    var profile: String

    @Argument(help: "Collections to sync (default: entries treatments devicestatus profile).")
    var collections: [String] = []

    @Flag(help: "Also reconcile a date range by search (finds what history misses).")
    var full = false

    @Option(help: ArgumentHelp("Start of the --full range: ISO date/time or a duration back (30d).", valueName: "time"))
    var from: String?

    @Option(help: ArgumentHelp("End of the --full range (default: now).", valueName: "time"))
    var to: String?

    func validate() throws {
        for name in collections where V3Collection(rawValue: name) == nil {
            throw ValidationError("unknown collection '\(name)' (known: \(V3Collection.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let now = Date()
        for (flag, value) in [("--from", from), ("--to", to)] {
            if let value, Self.time(value, now: now) == nil {
                throw ValidationError("\(flag): expected an ISO date or time (2024-05-01, 2024-05-01T10:00:00Z) or a duration back such as 30d, got '\(value)'")
            }
        }
        if let from, let to, let lower = Self.time(from, now: now), let upper = Self.time(to, now: now), upper < lower {
            throw ValidationError("--to is before --from")
        }
    }

    func run() async throws {
        let environment = try HostEnvironment.load()
        let names = collections.isEmpty ? Self.defaultCollections : collections.compactMap(V3Collection.init(rawValue:))
        var seen = Set<V3Collection>()
        let wanted = names.filter { seen.insert($0).inserted }
        let manager: SyncManager
        do {
            manager = try SyncService.manager(profile: profile, config: environment.config, paths: environment.paths)
        } catch let error as SyncServiceError {
            throw HostSetupError(description: error.description)
        }
        let now = Date()
        let range: (Date, Date)? = full || from != nil || to != nil
            ? (from.flatMap { Self.time($0, now: now) } ?? Date(timeIntervalSince1970: 0), to.flatMap { Self.time($0, now: now) } ?? now)
            : nil
        let display = SyncProgressDisplay(terminal: isatty(2) == 1)
        let interrupted = InterruptFlag()
        let task = Task { () -> Int32 in
            await Self.syncAll(wanted, manager: manager, range: range, display: display)
        }
        let watcher = SignalWatcher { _ in
            if interrupted.set() {
                task.cancel()
            } else {
                // A second Ctrl-C: stop now (stored pages are whole; SQLite keeps them).
                Foundation.exit(130)
            }
        }
        let status = await task.value
        watcher.cancel()
        if interrupted.isSet || status == 130 {
            display.clear()
            FileHandle.standardError.write(Data("lookout: sync interrupted; every page stored so far is kept (run it again to resume)\n".utf8))
            throw ExitCode(130)
        }
        if status != 0 { throw ExitCode(status) }
    }

    /// Syncs each collection in turn; returns the exit status (stops at the first failure).
    static func syncAll(_ collections: [V3Collection], manager: SyncManager, range: (Date, Date)?,
                        display: SyncProgressDisplay) async -> Int32 {
        if range == nil {
            do {
                let api = try await manager.client.resolvedAPI()
                if api != .v3 {
                    fail("sync reads API v3 history, which needs an access token (token_env or token_file in the "
                         + "profile); with this profile use --full to read through API v1")
                    return 1
                }
            } catch {
                if Task.isCancelled { return 130 }
                fail("cannot reach \(manager.site): \(SyncService.message(for: error))")
                return 1
            }
        }
        for collection in collections {
            display.start(collection)
            do {
                let report: SyncReport
                if let (from, through) = range {
                    report = try await manager.fullSync(collection, from: from, through: through) { display.update($0) }
                } else {
                    report = try await manager.sync(collection) { display.update($0) }
                }
                display.clear()
                FileHandle.standardOutput.write(Data((summary(report, full: range != nil) + "\n").utf8))
            } catch {
                display.clear()
                if error is CancellationError || Task.isCancelled { return 130 }
                fail("sync of \(collection.rawValue) failed: \(SyncService.message(for: error))")
                return 1
            }
        }
        return 0
    }

    static func fail(_ message: String) {
        FileHandle.standardError.write(Data("lookout: \(message)\n".utf8))
    }

    /// `entries: 12 added, 0 updated, 0 deleted, 3 unchanged (2 pages, 15 documents, 0.3 s)`,
    /// and for `--full` a second line with what history missed.
    static func summary(_ report: SyncReport, full: Bool) -> String {
        var text = "\(report.collection.rawValue): \(report.added.count) added, \(report.updated.count) updated, "
            + "\(report.deleted.count) deleted, \(report.unchanged) unchanged "
            + "(\(report.pages) \(report.pages == 1 ? "page" : "pages"), \(report.documents) documents, "
            + String(format: "%.1f s", report.duration) + ")"
        if full {
            text += "\n\(report.collection.rawValue): history missed \(report.missedByHistory.count)"
            if let api = report.reconciledWith { text += " (reconciled with API \(api.rawValue))" }
            text += "; \(report.missingOnServer.count) mirrored no longer on the server"
            if !report.missingOnServer.isEmpty {
                text += ": " + report.missingOnServer.prefix(10).joined(separator: ", ")
                    + (report.missingOnServer.count > 10 ? ", …" : "")
            }
        }
        return text
    }

    /// A time argument: ISO date or time, epoch ms, or a duration back from `now` (`30d`).
    static func time(_ text: String, now: Date) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let date = NightscoutDate(string: trimmed) { return date.date }
        if trimmed.count == 10, let date = NightscoutDate(string: trimmed + "T00:00:00Z") { return date.date }
        if let seconds = Quantities.parseDuration(trimmed), seconds > 0 { return now.addingTimeInterval(-seconds) }
        return nil
    }
}

/// Set once by the first Ctrl-C.
final class InterruptFlag: Sendable {
    private let value = Locked(false)

    /// Sets the flag; `true` the first time.
    func set() -> Bool { value.withLock { value in defer { value = true }; return !value } }
    var isSet: Bool { value.withLock { $0 } }
}

/// Progress on standard error: a redrawn bar on a terminal, else at most one line a second.
final class SyncProgressDisplay: Sendable {
    let terminal: Bool
    /// What was drawn and when; the lock also keeps lines from two threads apart.
    private let state = Locked((drawn: false, lastWrite: Date.distantPast, firstWatermark: Int64?.none))

    init(terminal: Bool) { self.terminal = terminal }

    /// A new collection begins.
    func start(_ collection: V3Collection) {
        state.withLock {
            $0.firstWatermark = nil
            $0.lastWrite = .distantPast
        }
    }

    /// After every stored page.
    func update(_ progress: SyncProgress) {
        state.withLock { state in
            let now = Date()
            let watermark = progress.watermark.flatMap { $0 > V3History.beginningOfTime ? $0 : nil }
            if state.firstWatermark == nil, let watermark { state.firstWatermark = watermark }
            let when = watermark.map { Self.iso(Date(timeIntervalSince1970: Double($0) / 1000)) } ?? "none yet"
            let rate = Int(progress.documentsPerSecond.rounded())
            if terminal {
                guard now.timeIntervalSince(state.lastWrite) >= 0.1 else { return }
                state.lastWrite = now
                let bar = bar(progress, first: state.firstWatermark, now: now)
                let line = "\(progress.collection.rawValue)  \(bar)  \(progress.pages) \(progress.pages == 1 ? "page" : "pages")  "
                    + "\(progress.documents) docs  \(rate) docs/s  \(progress.phase == .history ? "up to " + when : "reconciling")"
                write("\r\u{1B}[K" + line)
                state.drawn = true
            } else {
                guard now.timeIntervalSince(state.lastWrite) >= 1 else { return }
                state.lastWrite = now
                write("\(progress.collection.rawValue): \(progress.phase.rawValue) page \(progress.pages), "
                      + "\(progress.documents) documents, \(rate) docs/s, watermark \(when)\n")
            }
        }
    }

    /// Erases the bar (terminal only) before a summary or message.
    func clear() {
        state.withLock {
            if terminal, $0.drawn { write("\r\u{1B}[K") }
            $0.drawn = false
        }
    }

    /// `[#########-----------]` by how far the watermark went from its first value to now.
    private func bar(_ progress: SyncProgress, first firstWatermark: Int64?, now: Date) -> String {
        let width = 20
        var filled = 0
        if progress.phase == .reconciliation {
            // No total is known while searching: a block moving along the bar.
            let position = progress.pages % (width - 2)
            return "[" + String(repeating: " ", count: position) + "<=>" + String(repeating: " ", count: width - 3 - position) + "]"
        } else if let first = firstWatermark, let watermark = progress.watermark {
            let end = Double(NightscoutDate(now).epochMilliseconds)
            let span = end - Double(first)
            filled = span > 0 ? Int((Double(watermark - first) / span * Double(width)).rounded(.down)) : width
            filled = min(width, max(0, filled))
        }
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    private static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: date)
    }
}
