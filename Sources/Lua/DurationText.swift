/// Durations written by people: `90`, `"90s"`, `"250ms"`, `"5m"`, `"1h30m"`, `"1d"`.
public enum DurationText {
    /// Seconds for a duration text, or nil when it is not one. Plain numbers are seconds.
    public static func seconds(_ text: String) -> Double? {
        let s = text.trimmingCharacters(in: .whitespaces).lowercased()
        if s.isEmpty { return nil }
        if let plain = Double(s) { return plain.isFinite && plain >= 0 ? plain : nil }
        var total = 0.0
        var number = ""
        var index = s.startIndex
        var sawUnit = false
        while index < s.endIndex {
            let c = s[index]
            if c.isNumber || c == "." {
                number.append(c)
                index = s.index(after: index)
                continue
            }
            var unit = ""
            while index < s.endIndex, s[index].isLetter {
                unit.append(s[index])
                index = s.index(after: index)
            }
            guard let value = Double(number), let scale = unitScale[unit] else { return nil }
            total += value * scale
            number = ""
            sawUnit = true
        }
        guard number.isEmpty, sawUnit, total.isFinite else { return nil }
        return total
    }

    private static let unitScale: [String: Double] = [
        "ms": 0.001, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400,
    ]

    /// `1h30m`, `90s`, `250ms`: the shortest readable text for seconds.
    public static func format(_ seconds: Double) -> String {
        if seconds < 1, seconds > 0 { return "\(Int((seconds * 1000).rounded()))ms" }
        var rest = Int(seconds.rounded())
        if rest == 0 { return "0s" }
        var text = ""
        for (unit, size) in [("d", 86400), ("h", 3600), ("m", 60), ("s", 1)] where rest >= size {
            text += "\(rest / size)\(unit)"
            rest %= size
        }
        return text
    }
}

import Foundation
