import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The clocks the benchmarks use, and the statistics they keep.
enum BenchClock {
    /// Seconds of CPU time the whole process has used (the clock Lua's `os.clock` reads), so
    /// Swift-side timings compare with timings taken inside Lua.
    static func processCPU() -> Double { read(CLOCK_PROCESS_CPUTIME_ID) }

    /// Seconds on the monotonic wall clock.
    static func monotonic() -> Double { read(CLOCK_MONOTONIC) }

    private static func read(_ clock: clockid_t) -> Double {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// The median of some samples (the mean of the middle two for an even count).
    static func median(_ samples: [Double]) -> Double {
        precondition(!samples.isEmpty, "median of no samples")
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
