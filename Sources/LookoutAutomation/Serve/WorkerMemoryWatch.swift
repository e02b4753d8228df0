import Foundation
import LookoutWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory ceiling of a `serve --isolate` worker process: the parent reads the worker's
/// resident memory (`VmRSS` in `/proc/PID/status`) four times a second and kills a worker past
/// the ceiling, which is then reported crashed with the reason and restarted with backoff. The
/// worker also sets `RLIMIT_DATA` on itself (``WorkerMemoryCeiling/applyLimit(ceiling:)``), so
/// that it cannot grow without bound between two looks either.
public enum WorkerMemoryCeiling {
    /// The environment variable that gives a worker its ceiling in bytes.
    public static let variable = "LOOKOUT_WORKER_MEMORY_CEILING"

    /// The ceiling of a worker whose script may allocate `memoryLimit` bytes (0 = none, then no
    /// ceiling): what the Lua state may hold, as much again for what the host buffers for the
    /// script (``Lua/LuaHostBytes``), and 256 MiB for the process itself.
    public static func ceiling(memoryLimit: Int) -> Int? {
        memoryLimit > 0 ? 2 * memoryLimit + (256 << 20) : nil
    }

    /// The `RLIMIT_DATA` a worker sets on itself for `ceiling`: private writable memory counts
    /// there (thread stacks and reserved heaps too, not only what is touched), so it is the
    /// ceiling plus room for those; it stops a worker that grows too fast for the watch.
    public static func dataLimit(ceiling: Int) -> Int { 2 * ceiling + (512 << 20) }

    /// Sets `RLIMIT_DATA` for `ceiling` on this process (a worker, at start); false if it failed.
    @discardableResult
    public static func applyLimit(ceiling: Int) -> Bool {
        #if os(Linux)
        let bytes = rlim_t(dataLimit(ceiling: ceiling))
        var limit = rlimit(rlim_cur: bytes, rlim_max: bytes)
        return setrlimit(__rlimit_resource_t(RLIMIT_DATA.rawValue), &limit) == 0
        #else
        return false
        #endif
    }

    /// Resident bytes of process `pid` (`VmRSS`), nil when unknown (not Linux, or it ended).
    public static func residentBytes(pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let number = line.dropFirst("VmRSS:".count).split(separator: " ").first.flatMap { Int($0) }
            return number.map { $0 * 1024 }
        }
        return nil
    }
}

/// Watches one worker process against its ceiling (see ``WorkerMemoryCeiling``).
final class WorkerMemoryWatch: Sendable {
    private let task: Task<Void, Never>
    private let verdict = Locked<String?>(nil)

    /// Starts watching `pid`; past `ceiling` bytes the worker is killed (SIGKILL) and ``reason`` says why.
    init(pid: Int32, ceiling: Int) {
        let verdict = self.verdict
        task = Task.detached(priority: .high) {
            while !Task.isCancelled {
                if let resident = WorkerMemoryCeiling.residentBytes(pid: pid), resident > ceiling {
                    verdict.withLock {
                        $0 = "worker process used \(resident >> 20) MB, over its ceiling of \(ceiling >> 20) MB "
                            + "(twice the memory limit + 256 MB; see --memory-limit)"
                    }
                    kill(pid, SIGKILL)
                    return
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    /// Why the worker was killed, if it was.
    var reason: String? { verdict.withLock { $0 } }

    /// Stops watching.
    func cancel() { task.cancel() }
}
