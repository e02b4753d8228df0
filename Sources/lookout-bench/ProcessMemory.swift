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

    /// `Private_Dirty` of another process (its own heap and stacks, no shared or file-backed
    /// pages), in bytes (0 if unknown).
    static func privateDirtyBytes(pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("Private_Dirty:") {
            return (Int(String(line.dropFirst("Private_Dirty:".count).filter(\.isNumber))) ?? 0) * 1024
        }
        return 0
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
