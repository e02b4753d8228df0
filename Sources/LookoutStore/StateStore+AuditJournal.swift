import Foundation
import GRDB
import NightscoutKit

#if canImport(Glibc)
import Glibc
private func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer?, _ n: Int) -> Int { Glibc.write(fd, p, n) }
#elseif canImport(Darwin)
import Darwin
private func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer?, _ n: Int) -> Int { Darwin.write(fd, p, n) }
#endif

/// The audit journal (`<database>.audit-journal`, mode 0600): audit entries the database could
/// not take when they happened (another process held its lock past `busyTimeout`, the disk was
/// full), one JSON entry a line. A guard that cannot reach its ledger refuses the command; the
/// refusal lands here, and the next audit write or read that succeeds (in any process) folds
/// the journal into the log, so no refusal goes unaudited.
///
/// Writers lock the file (`flock`) and check that the path still names the file they opened; a
/// fold renames the journal away first, waits for the lock, then reads it. The journal is
/// bounded by `auditJournalLimit`; entries past it are lost (and the guard's error says so).
extension StateStore {
    /// The most the journal may hold, in bytes (an entry is a few KiB at most: `AuditText`).
    static let auditJournalLimit = 4 << 20

    /// The journal's path, or nil for an in-memory store.
    var auditJournalPath: String? { path.map { $0 + ".audit-journal" } }

    /// Appends `entry` to the journal; false when it could not.
    @discardableResult
    func journal(_ entry: AuditEntry) -> Bool {
        guard let file = auditJournalPath, var line = try? JSONEncoder().encode(entry) else { return false }
        line.append(UInt8(ascii: "\n"))
        for _ in 0..<5 {
            let fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            guard flock(fd, LOCK_EX) == 0 else { return false }
            var opened = stat(), named = stat()
            // A fold renamed the file between our open and our lock: write to the new one.
            guard fstat(fd, &opened) == 0, stat(file, &named) == 0, opened.st_ino == named.st_ino else { continue }
            guard Int(opened.st_size) + line.count <= Self.auditJournalLimit else { return false }
            return line.withUnsafeBytes { systemWrite(fd, $0.baseAddress, $0.count) == $0.count }
        }
        return false
    }

    /// Moves the journal's entries into the audit log (entries already there, by id, are
    /// skipped); leaves the journal as it is when the database cannot take them yet.
    func foldAuditJournal() async {
        guard let file = auditJournalPath else { return }
        var info = stat()
        guard stat(file, &info) == 0, info.st_size > 0 else { return }
        let folding = file + ".folding-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard rename(file, folding) == 0 else { return }
        let fd = open(folding, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = flock(fd, LOCK_EX)  // writers that opened it before the rename have finished
        close(fd)
        guard let data = FileManager.default.contents(atPath: folding) else { return }
        let entries = data.split(separator: UInt8(ascii: "\n")).compactMap { try? JSONDecoder().decode(AuditEntry.self, from: Data($0)) }
        do {
            let commands = try entries.map { try Self.commandText($0) }
            try await write { db in
                for (entry, command) in zip(entries, commands) {
                    let known = try Bool.fetchOne(db, sql: "SELECT 1 FROM audit WHERE id = ?", arguments: [entry.id.uuidString]) ?? false
                    if !known { try StateStore.insert(entry, command: command, in: db) }
                }
            }
            unlink(folding)
        } catch {
            // Not yet: put the entries back for the next attempt.
            for entry in entries { journal(entry) }
            unlink(folding)
        }
    }
}
