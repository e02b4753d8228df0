import Foundation
import Hummingbird

/// A fault a simulator can inject in front of its real API (through `FaultMiddleware`).
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

/// Holds injected fault rules; consulted once per request by `FaultMiddleware`.
actor SimFaults {
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

/// Applies injected faults to every request of a router, matched or not: latency before the
/// routes, a forced answer instead of them, or the routes' answer sent truncated or slowly. Any
/// simulator whose context is `SimRequestContext` can add it, with its own source of decisions.
struct FaultMiddleware: RouterMiddleware {
    typealias Context = SimRequestContext
    /// The fault (if any) for a request path; asked once per request.
    let decide: @Sendable (String) async -> SimFaults.Decision

    /// Faults from a `SimFaults` (the Nightscout simulator's `inject` rules).
    init(faults: SimFaults) { decide = { path in await faults.next(path: path) } }

    /// Faults from any source.
    init(decide: @escaping @Sendable (String) async -> SimFaults.Decision) { self.decide = decide }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let fault = await decide(request.uri.path)
        if let ms = fault.latencyMs, ms > 0 { try? await Task.sleep(for: .milliseconds(ms)) }
        if let forced = fault.response { return forced.httpResponse }
        let response = try await next(request, context)
        switch fault.bodyMode {
        case .normal: return response
        case .truncated: return try await Self.truncated(response)
        case .slow(let chunk, let delayMs): return try await Self.slow(response, chunk: chunk, delayMs: delayMs)
        }
    }

    /// Announces the full length, sends half the body, then drops the connection.
    static func truncated(_ response: Response) async throws -> Response {
        var response = response
        let bytes = try await collect(response.body)
        let half = bytes.getSlice(at: bytes.readerIndex, length: bytes.readableBytes / 2) ?? ByteBuffer()
        response.body = .init(contentLength: max(bytes.readableBytes, 2)) { writer in
            try await writer.write(half)
            throw CancellationError()
        }
        return response
    }

    /// Dribbles the body out in `chunk`-byte pieces, `delayMs` apart.
    static func slow(_ response: Response, chunk: Int, delayMs: Int64) async throws -> Response {
        var response = response
        let bytes = try await collect(response.body)
        response.body = .init(contentLength: bytes.readableBytes) { writer in
            var rest = bytes
            while let piece = rest.readSlice(length: min(max(chunk, 1), rest.readableBytes)), piece.readableBytes > 0 {
                try await writer.write(piece)
                if rest.readableBytes > 0 { try await Task.sleep(for: .milliseconds(delayMs)) }
            }
            try await writer.finish(nil)
        }
        return response
    }

    /// The whole of a response body.
    static func collect(_ body: ResponseBody) async throws -> ByteBuffer {
        let collector = BodyCollector()
        try await body.write(collector)
        return collector.buffer
    }
}

/// A `ResponseBodyWriter` that keeps what is written (a class, so the bytes outlive the
/// `consuming` write).
private final class BodyCollector: ResponseBodyWriter {
    var buffer = ByteBuffer()
    func write(_ buffer: ByteBuffer) async throws {
        var part = buffer
        self.buffer.writeBuffer(&part)
    }
    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
