/// A Signal K wildcard pattern for paths and contexts, matched the way signalk-server does
/// (`subscriptionmanager.ts`): the pattern is anchored at both ends, `.` is literal and `*`
/// matches any run of characters **including dots and the empty string**.
///
/// | pattern | matches | does not match |
/// |---|---|---|
/// | `navigation.*` | `navigation.speedOverGround`, `navigation.position.latitude` | `navigation`, `environment.depth` |
/// | `*.speedOverGround` | `navigation.speedOverGround` | `navigation.speedOverGroundX` |
/// | `propulsion.*.oilTemperature` | `propulsion.port.oilTemperature` | `propulsion.oilTemperature` |
/// | `vessels.*` | `vessels.urn:mrn:imo:mmsi:230099999` | `aton.urn:…`, `vessels` |
/// | `*` | everything, including `""` | |
public struct SignalKPattern: Sendable, Hashable, CustomStringConvertible {
    /// The pattern text as given.
    public let pattern: String
    let parts: [[UInt8]]  // literal pieces between '*'
    let hasWildcard: Bool

    /// Compiles a pattern. Every string is a valid pattern; without `*` it matches only itself.
    public init(_ pattern: String) {
        self.pattern = pattern
        parts = pattern.utf8.split(separator: UInt8(ascii: "*"), omittingEmptySubsequences: false).map(Array.init)
        hasWildcard = parts.count > 1
    }

    /// The pattern text.
    public var description: String { pattern }

    /// Whether `text` matches the whole pattern.
    public func matches(_ text: String) -> Bool {
        if !hasWildcard { return text == pattern }
        var text = text
        return text.withUTF8 { matches(utf8: $0) }
    }

    func matches(utf8 t: UnsafeBufferPointer<UInt8>) -> Bool {
        let first = parts[0], last = parts[parts.count - 1]
        guard t.count >= first.count + last.count else { return false }
        for k in 0..<first.count where t[k] != first[k] { return false }
        let tailStart = t.count - last.count
        for k in 0..<last.count where t[tailStart + k] != last[k] { return false }
        // Middle pieces: leftmost match in order between the prefix and the suffix.
        var pos = first.count
        if parts.count > 2 {
            for piece in parts[1..<(parts.count - 1)] where !piece.isEmpty {
                guard let found = find(piece, in: t, from: pos, limit: tailStart) else { return false }
                pos = found + piece.count
            }
        }
        return pos <= tailStart
    }

    private func find(_ piece: [UInt8], in t: UnsafeBufferPointer<UInt8>, from: Int, limit: Int) -> Int? {
        guard limit - from >= piece.count else { return nil }
        var s = from
        while s + piece.count <= limit {
            var ok = true
            for k in 0..<piece.count where t[s + k] != piece[k] {
                ok = false
                break
            }
            if ok { return s }
            s += 1
        }
        return nil
    }

    /// Context matching as signalk-server does it: the pattern matches like ``matches(_:)``, and
    /// additionally `vessels.self` and `self` match `selfContext`. A `nil` pattern (no context in a
    /// subscription) matches every context.
    public static func contextMatches(_ pattern: SignalKPattern?, context: String, selfContext: String?) -> Bool {
        guard let pattern else { return true }
        if (pattern.pattern == SignalKContext.selfAlias || pattern.pattern == "self"), let selfContext, context == selfContext {
            return true
        }
        return pattern.matches(context)
    }
}
