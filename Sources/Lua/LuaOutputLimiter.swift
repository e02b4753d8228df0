import LuaShim

/// What one script may write with `print` and `log`: lines cut to `lineLimit` bytes (the rest
/// replaced by `…(+N bytes)`), and a token bucket of `burst` lines refilled at `rate` lines a
/// second. Lines over the rate are dropped and counted; the next line that passes is preceded
/// by `… suppressed N lines (over the output rate …)`. One limiter per Lua state, used on its
/// executor only (`print` and every `log` level share it).
public struct LuaOutputLimiter: Sendable {
    /// Bytes kept of a line; 0: no limit.
    public let lineLimit: Int
    /// Lines a second after the burst; 0: no limit.
    public let rate: Double
    /// Lines at once.
    public let burst: Int
    private var tokens: Double
    private var last: Int64
    private var suppressed = 0

    /// A limiter starting with a full bucket.
    public init(lineLimit: Int, rate: Double, burst: Int) {
        self.lineLimit = lineLimit
        self.rate = rate
        self.burst = max(1, burst)
        tokens = Double(max(1, burst))
        last = shim_now_ns()
    }

    /// Whether one more line may be written now; when it may, the summary of lines dropped
    /// before it (to write first), if any. Call `admit` before making the line, so a dropped
    /// line costs nothing.
    public mutating func admit() -> (pass: Bool, summary: String?) {
        guard rate > 0 else { return (true, nil) }
        let now = shim_now_ns()
        tokens = min(Double(burst), tokens + Double(now &- last) / 1e9 * rate)
        last = now
        guard tokens >= 1 else {
            suppressed += 1
            return (false, nil)
        }
        tokens -= 1
        guard suppressed > 0 else { return (true, nil) }
        defer { suppressed = 0 }
        return (true, "… suppressed \(suppressed) lines (over the output rate of \(Self.number(rate)) lines a second "
                    + "after \(burst); limits.log_rate and log_burst in config.toml)")
    }

    /// `line` cut to `lineLimit` bytes, with a marker naming what was cut.
    public func cut(_ line: String) -> String {
        let bytes = line.utf8.count
        guard lineLimit > 0, bytes > lineLimit else { return line }
        var kept = Array(line.utf8.prefix(max(0, lineLimit - 32)))
        while let byte = kept.last, byte & 0xC0 == 0x80 { kept.removeLast() }  // a character's continuation
        if let byte = kept.last, byte & 0x80 != 0 { kept.removeLast() }        // and its lead byte
        return String(decoding: kept, as: UTF8.self) + "…(+\(bytes - kept.count) bytes)"
    }

    static func number(_ x: Double) -> String { x == x.rounded() && x < 1e15 ? String(Int(x)) : String(x) }
}
