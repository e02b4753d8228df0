import Foundation

extension NightscoutSimulator {
    /// Injects `fault` for the next `count` matching requests (nil = until `clearFaults()`).
    /// `pathPrefix` restricts it to paths starting with that text (e.g. `/api/v3/entries`).
    public func inject(_ fault: NightscoutFault, count: Int? = 1, pathPrefix: String? = nil) async {
        await faults.add(.init(fault: fault, remaining: count, fraction: nil, pathPrefix: pathPrefix))
    }

    /// Injects `fault` into a random `fraction` (0…1) of matching requests, deterministically
    /// from `seed`, until `clearFaults()`.
    public func inject(_ fault: NightscoutFault, fraction: Double, seed: UInt64 = 42, pathPrefix: String? = nil) async {
        await faults.seed(seed)
        await faults.add(.init(fault: fault, remaining: nil, fraction: fraction, pathPrefix: pathPrefix))
    }

    /// Removes all injected faults.
    public func clearFaults() async { await faults.clear() }

    /// How many requests a fault has been applied to so far.
    public func injectedFaultCount() async -> Int { await faults.injectedCount }
}
