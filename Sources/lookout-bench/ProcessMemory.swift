import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The process's resident memory, from `/proc/self/status`.
enum ProcessMemory {
    /// Resident set size in bytes (`VmRSS`), or 0 where /proc is not available.
    static func residentBytes() -> Int { residentBytes(statusFile: "/proc/self/status") }

    /// `VmRSS` of another process, in bytes (0 if unknown).
    static func residentBytes(pid: Int32) -> Int { residentBytes(statusFile: "/proc/\(pid)/status") }

    /// Another process's memory from `/proc/PID/smaps_rollup`, in bytes (zeros if unknown).
    struct Rollup {
        /// Resident set size: every page in memory, shared ones counted in full.
        var rss = 0
        /// Proportional set size: shared pages divided among the processes that map them.
        var pss = 0
        /// Its own heap and stacks: no shared or file-backed pages.
        var privateDirty = 0
    }

    static func rollup(pid: Int32) -> Rollup {
        var rollup = Rollup()
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return rollup }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let kB = Int(String(parts[1].filter(\.isNumber))) else { continue }
            switch parts[0] {
            case "Rss": rollup.rss = kB * 1024
            case "Pss": rollup.pss = kB * 1024
            case "Private_Dirty": rollup.privateDirty = kB * 1024
            default: break
            }
        }
        return rollup
    }

    private static func residentBytes(statusFile: String) -> Int {
        guard let text = try? String(contentsOfFile: statusFile, encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.dropFirst("VmRSS:".count).filter(\.isNumber)
            return (Int(String(digits)) ?? 0) * 1024
        }
        return 0
    }

    /// Gives freed heap memory back to the system, so a following RSS delta counts new
    /// allocations even when earlier benchmarks left free memory in malloc's arenas.
    static func trim() {
        #if canImport(Glibc)
        // malloc_trim is glibc's (malloc.h), which the Glibc module does not import.
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(symbol, to: Trim.self)(0) }
        #endif
    }
}
