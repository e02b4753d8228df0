import Foundation

/// A fault the simulator can inject in front of the real API.
public enum NightscoutFault: Sendable, Equatable {
    /// Answer with this HTTP status and body `{"status":<code>}` instead of handling the request.
    case status(Int)
    /// Answer 429 with `Retry-After: <seconds>`.
    case tooManyRequests(retryAfterSeconds: Int)
    /// Delay the request (then handle it normally).
    case latency(Duration)
    /// Handle the request, but send only half the body and close the connection.
    case truncated
    /// Handle the request and dribble the body out in chunks with a pause between them.
    case slow(chunkSize: Int, delay: Duration)
}

/// Deterministic SplitMix64 generator (shared by faults and the CGM generator).
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64
    /// Creates a generator from a seed.
    public init(seed: UInt64) { state = seed }
    /// Next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform double in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    /// Standard normal sample (Box–Muller).
    public mutating func gaussian() -> Double {
        let u1 = max(unit(), 1e-12), u2 = unit()
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}

/// Holds injected fault rules; consulted once per request.
actor NightscoutFaults {
    enum BodyMode: Sendable { case normal, truncated, slow(Int, Int64) }

    struct Decision: Sendable {
        var latencyMs: Int64?
        var response: SimResponse?
        var bodyMode: BodyMode = .normal
    }

    struct Rule: Sendable {
        var fault: NightscoutFault
        var remaining: Int?  // nil = unlimited
        var fraction: Double?
        var pathPrefix: String?
    }

    var rules: [Rule] = []
    var rng = SeededRandom(seed: 42)
    var injectedCount = 0

    func add(_ r: Rule) { rules.append(r) }
    func clear() { rules.removeAll() }
    func seed(_ s: UInt64) { rng = SeededRandom(seed: s) }

    static func ms(_ d: Duration) -> Int64 {
        d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    }

    func next(path: String) -> Decision {
        var decision = Decision()
        var i = 0
        while i < rules.count {
            var r = rules[i]
            if let p = r.pathPrefix, !path.hasPrefix(p) { i += 1; continue }
            if let f = r.fraction, rng.unit() >= f { i += 1; continue }
            if let n = r.remaining {
                r.remaining = n - 1
                if n - 1 <= 0 { rules.remove(at: i) } else { rules[i] = r; i += 1 }
            } else {
                i += 1
            }
            injectedCount += 1
            switch r.fault {
            case .latency(let d):
                decision.latencyMs = (decision.latencyMs ?? 0) + Self.ms(d)
                continue
            case .status(let code):
                decision.response = .json(code, ["status": .int(Int64(code))])
            case .tooManyRequests(let s):
                decision.response = .json(
                    429, ["status": 429, "message": "Too Many Requests"], headers: [("Retry-After", String(s))])
            case .truncated:
                decision.bodyMode = .truncated
            case .slow(let chunk, let d):
                decision.bodyMode = .slow(chunk, Self.ms(d))
            }
            return decision
        }
        return decision
    }
}

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
