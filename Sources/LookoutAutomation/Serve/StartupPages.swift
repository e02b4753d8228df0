#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Gives back the pages of the `lookout` binary that serve touched only to start: argument
/// parsing, config checks, migrations, the Lua libraries' registration, first connections.
///
/// The kernel maps the binary's code in as it runs, 64 KB around each page touched, and keeps
/// it mapped: after start-up serve held about 25 MB of code pages of which about 19 MB are used
/// again while it serves. Like a kernel freeing its `__init` memory, serve drops its mapping
/// of the binary's read-only segments once its scripts run, and then every hour; what it uses
/// afterwards is mapped again from the page cache (a minor fault per page, no disk read while
/// the file stays cached). Only mappings of the binary that are not writable and hold no page
/// of their own (`Anonymous: 0 kB` in `/proc/self/smaps`: no relocated or written copy) are
/// released, so nothing but clean file pages is dropped; the relocated, write-protected part
/// (RELRO) and the data are left alone. The constants (`.rodata`, ICU's data among them) lie in
/// a writable mapping, since Swift marks some of its constant sections writable; nothing
/// writes them, and of them only pages the kernel still backs by the file are released.
public enum StartupPages {
    /// When the first release happens after serve starts its scripts.
    static let firstRelease: Duration = .seconds(5)
    /// How often it happens after that (pages used only by rare work, a daily report's).
    static let period: Duration = .seconds(3600)

    /// Releases at `firstRelease`, then every `period`, until cancelled.
    public static func releaseWhileServing() async {
        try? await Task.sleep(for: firstRelease)
        while !Task.isCancelled {
            _ = release()
            try? await Task.sleep(for: period)
        }
    }

    /// Drops this process's mapping of the clean, read-only mappings of its own executable and
    /// of the clean pages of its constants; returns the bytes released (their size; the
    /// resident part is what RSS loses).
    @discardableResult
    public static func release() -> Int {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
              let smaps = try? String(contentsOfFile: "/proc/self/smaps", encoding: .utf8)
        else { return 0 }
        var ranges = cleanReadOnlyMappings(smaps: smaps, of: executable)
        if let constants = ExecutableSection.range(named: ".rodata") { ranges += filePages(in: constants) }
        var released = 0
        for range in ranges where madvise(UnsafeMutableRawPointer(bitPattern: range.lowerBound), range.count, MADV_DONTNEED) == 0 {
            released += range.count
        }
        return released
    }

    /// The runs of whole pages inside `range` that hold no page of this process's own: mapped
    /// from the file or not mapped at all, never copied on write or swapped (flags of
    /// `/proc/self/pagemap`, readable by the process itself).
    static func filePages(in range: Range<Int>) -> [Range<Int>] {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let first = (range.lowerBound + page - 1) / page, end = range.upperBound / page
        guard first < end, let pagemap = FileHandle(forReadingAtPath: "/proc/self/pagemap"),
              (try? pagemap.seek(toOffset: UInt64(first * 8))) != nil,
              let data = try? pagemap.read(upToCount: (end - first) * 8), data.count == (end - first) * 8
        else { return [] }
        try? pagemap.close()
        var runs: [Range<Int>] = []
        var runStart: Int?
        for i in 0..<(end - first) {
            let entry = (0..<8).reduce(UInt64(0)) { $0 | UInt64(data[data.startIndex + i * 8 + $1]) << (8 * UInt64($1)) }
            let present = entry >> 63 & 1 == 1, swapped = entry >> 62 & 1 == 1, fileBacked = entry >> 61 & 1 == 1
            let clean = present ? fileBacked : !swapped
            if clean, runStart == nil { runStart = first + i }
            if !clean, let start = runStart { runs.append(start * page..<(first + i) * page); runStart = nil }
        }
        if let start = runStart { runs.append(start * page..<end * page) }
        return runs
    }

    /// The address ranges in `smaps` that map `path`, are not writable and have no anonymous
    /// (copied-on-write) pages.
    static func cleanReadOnlyMappings(smaps: String, of path: String) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var current: Range<Int>?
        for line in smaps.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            let bounds = first.split(separator: "-")
            if bounds.count == 2, let start = Int(bounds[0], radix: 16), let end = Int(bounds[1], radix: 16) {
                // A mapping's header: `start-end perms offset device inode path`.
                let readOnly = fields.count >= 6 && fields[5...].joined(separator: " ") == path && !fields[1].contains("w")
                current = readOnly && start < end ? start..<end : nil
            } else if first == "Anonymous:", let range = current {
                if fields.count >= 2, fields[1] == "0" { ranges.append(range) }
                current = nil
            }
        }
        return ranges
    }
}
