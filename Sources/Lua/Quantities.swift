import Foundation

/// Durations and sizes as people write them (config files, flags, `timer.every("5m", …)`): `"250ms"`, `"1h30m"`, `"64MB"`.
///
/// Durations: a plain number of seconds (`"90"`, `"1.5"`), or one or more parts from largest to
/// smallest unit, each at most once: `d` (days), `h`, `m` (minutes), `s`, `ms`. Parts may have a
/// fraction (`"1.5h"`) and be separated by spaces (`"1h 30m"`).
///
/// Sizes: a plain number of bytes, or a number and a unit, case-insensitive: `B`, `K`/`KB`/`KiB`,
/// `M`/`MB`/`MiB`, `G`/`GB`/`GiB`, `T`/`TB`/`TiB`. **All units are powers of 1024**: people who
/// write `64MB` for a memory limit mean 64 × 1024 × 1024 bytes. A fractional size is rounded to
/// the nearest byte.
///
/// Negative numbers, NaN, infinities and values that overflow are rejected (`nil`).
public enum Quantities {
    private static let durationUnits: [(name: String, seconds: Double)] = [
        ("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1), ("ms", 0.001),
    ]

    private static let sizeUnits: [String: Int] = [
        "b": 1,
        "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
        "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
        "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
        "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
    ]

    /// Seconds from text such as `"90s"`, `"250ms"`, `"5m"`, `"1h30m"`, `"1d"` or `"12.5"`;
    /// `nil` if the text is not a valid, finite, non-negative duration.
    public static func parseDuration(_ text: String) -> Double? {
        var scanner = QuantitiesScanner(text)
        guard !scanner.atEnd else { return nil }
        guard let first = scanner.number() else { return nil }
        scanner.skipSpaces()
        if scanner.atEnd { return finite(first.value) }
        var total = 0.0
        var number = first.value
        var nextUnit = 0
        while true {
            let unit = scanner.letters()
            guard let index = durationUnits.firstIndex(where: { $0.name == unit }), index >= nextUnit else {
                return nil
            }
            total += number * durationUnits[index].seconds
            nextUnit = index + 1
            scanner.skipSpaces()
            if scanner.atEnd { return finite(total) }
            guard let next = scanner.number() else { return nil }
            number = next.value
            scanner.skipSpaces()
        }
    }

    /// Bytes from text such as `"65536"`, `"512KB"`, `"64MB"`, `"1GiB"` or `"1.5 G"` (all units
    /// are powers of 1024); `nil` if invalid, negative or too large for `Int`.
    public static func parseSize(_ text: String) -> Int? {
        var scanner = QuantitiesScanner(text)
        guard let number = scanner.number() else { return nil }
        scanner.skipSpaces()
        let unitText = scanner.letters().lowercased()
        scanner.skipSpaces()
        guard scanner.atEnd else { return nil }
        let multiplier: Int
        if unitText.isEmpty {
            multiplier = 1
        } else {
            guard let known = sizeUnits[unitText] else { return nil }
            multiplier = known
        }
        if let whole = number.integer {
            let (bytes, overflow) = whole.multipliedReportingOverflow(by: multiplier)
            return overflow ? nil : bytes
        }
        let bytes = (number.value * Double(multiplier)).rounded()
        guard bytes.isFinite, bytes < 9.2e18 else { return nil }
        return Int(bytes)
    }

    /// A duration for messages: `"250ms"`, `"5s"`, `"1m30s"`, `"1h30m"`, `"1d"`, `"2.5s"`;
    /// `"unlimited"` for infinity.
    public static func formatDuration(_ seconds: Double) -> String {
        if seconds.isNaN { return "nan" }
        if seconds.isInfinite { return seconds > 0 ? "unlimited" : "-unlimited" }
        if seconds < 0 { return "-" + formatDuration(-seconds) }
        if seconds == 0 { return "0s" }
        if seconds < 1 { return trimmed(seconds * 1000, decimals: 3) + "ms" }
        if seconds >= 1e15 { return trimmed(seconds, decimals: 0) + "s" }
        var milliseconds = (seconds * 1000).rounded()
        var parts = ""
        for (name, unit) in [("d", 86_400_000.0), ("h", 3_600_000.0), ("m", 60_000.0)] {
            let count = (milliseconds / unit).rounded(.down)
            if count > 0 {
                parts += trimmed(count, decimals: 0) + name
                milliseconds -= count * unit
            }
        }
        if milliseconds > 0 { parts += trimmed(milliseconds / 1000, decimals: 3) + "s" }
        return parts
    }

    /// A size for messages in powers of 1024: `"100 B"`, `"1.5 KiB"`, `"64 MiB"`, `"1 GiB"`.
    public static func formatSize(_ bytes: Int) -> String {
        if bytes < 0 { return "-" + formatSize(bytes == .min ? .max : -bytes) }
        let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        var value = Double(bytes)
        var index = 0
        while value >= 1024, index < units.count - 1 {
            value /= 1024
            index += 1
        }
        return trimmed(value, decimals: index == 0 ? 0 : 2) + " " + units[index]
    }

    private static func finite(_ value: Double) -> Double? {
        value.isFinite ? value : nil
    }

    /// `value` with at most `decimals` decimals and no trailing zeros.
    private static func trimmed(_ value: Double, decimals: Int) -> String {
        var text = String(format: "%.\(decimals)f", value)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text
    }
}

/// A tiny scanner over the text of a quantity.
struct QuantitiesScanner {
    /// A scanned number: its value, and the integer if it had no fraction and fits in `Int`.
    struct Number {
        var value: Double
        var integer: Int?
    }

    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ text: String) {
        scalars = Array(text.trimmingCharacters(in: .whitespaces).unicodeScalars)
    }

    var atEnd: Bool { index >= scalars.count }

    mutating func skipSpaces() {
        while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
    }

    /// `digits` or `digits.digits`; no sign, no exponent.
    mutating func number() -> Number? {
        let start = index
        while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
        let integerEnd = index
        guard integerEnd > start else { return nil }
        if index < scalars.count, scalars[index] == "." {
            index += 1
            let fractionStart = index
            while index < scalars.count, ("0"..."9").contains(scalars[index]) { index += 1 }
            guard index > fractionStart else { return nil }
        }
        let text = String(String.UnicodeScalarView(scalars[start..<index]))
        guard let value = Double(text), value.isFinite else { return nil }
        let integer = integerEnd == index ? Int(text) : nil
        if integerEnd == index && integer == nil { return nil }  // whole number beyond Int
        return Number(value: value, integer: integer)
    }

    /// The ASCII letters at the cursor (possibly none).
    mutating func letters() -> String {
        let start = index
        while index < scalars.count, ("a"..."z").contains(scalars[index]) || ("A"..."Z").contains(scalars[index]) {
            index += 1
        }
        return String(String.UnicodeScalarView(scalars[start..<index]))
    }
}
