import Foundation
import LookoutWire

/// Conversions between Signal K's SI units and the units people read. Signal K stores everything in
/// SI (angles in radians, speeds in m/s, temperatures in kelvin); convert only for display.
public enum SignalKUnits {
    /// Metres per second in one knot (1852 m per hour, exact).
    public static let metersPerSecondPerKnot = 1852.0 / 3600.0
    /// 0 °C in kelvin.
    public static let zeroCelsiusInKelvin = 273.15

    /// Radians → degrees.
    public static func degrees(fromRadians radians: Double) -> Double { radians * 180 / .pi }
    /// Degrees → radians.
    public static func radians(fromDegrees degrees: Double) -> Double { degrees * .pi / 180 }
    /// m/s → knots.
    public static func knots(fromMetersPerSecond mps: Double) -> Double { mps / metersPerSecondPerKnot }
    /// Knots → m/s.
    public static func metersPerSecond(fromKnots knots: Double) -> Double { knots * metersPerSecondPerKnot }
    /// Kelvin → degrees Celsius.
    public static func celsius(fromKelvin kelvin: Double) -> Double { kelvin - zeroCelsiusInKelvin }
    /// Degrees Celsius → kelvin.
    public static func kelvin(fromCelsius celsius: Double) -> Double { celsius + zeroCelsiusInKelvin }
}

extension SignalKUnits {
    /// The usual display unit of an SI unit when a path's meta has no `displayUnits`: factor,
    /// offset, symbol and decimals (m/s → kn, rad → °, K → °C, Pa → hPa, ratio → %, rad/s → °/min).
    static let usual: [String: (factor: Double, offset: Double, symbol: String, decimals: Int)] = [
        "m/s": (3600 / 1852, 0, "kn", 1), "rad": (180 / .pi, 0, "°", 1), "rad/s": (180 / .pi * 60, 0, "°/min", 1),
        "K": (1, -zeroCelsiusInKelvin, "°C", 1), "Pa": (0.01, 0, "hPa", 1), "ratio": (100, 0, "%", 0),
        "m": (1, 0, "m", 1), "V": (1, 0, "V", 2), "A": (1, 0, "A", 2), "W": (1, 0, "W", 0), "Hz": (60, 0, "rpm", 0),
    ]

    /// A value as people read it, by its path's metadata: converted by the `displayUnits` the
    /// server resolved (signalk-server 2.x: a Math.js `formula` from SI such as `value * 1.94384`,
    /// a `symbol`, a `displayFormat` such as `0.0`), else from the SI `units` to the usual unit;
    /// nil when neither is known (or the formula is not `value`, `value * k`, `value / k`,
    /// `value + k` or `value - k`). The text is the number with the format's decimals and the
    /// symbol: `6.2 kn`, `93.0°`, `17.1 °C`.
    public static func display(_ value: Double, meta: JSONValue?) -> (value: Double, symbol: String, text: String)? {
        guard value.isFinite else { return nil }
        var shown: (Double, String, Int)?
        if let d = meta?["displayUnits"], let formula = d["formula"]?.stringValue, let symbol = d["symbol"]?.stringValue,
            let converted = apply(formula: formula, to: value)
        {
            let format = d["displayFormat"]?.stringValue ?? "0.0"
            let decimals = format == "0" ? 0 : format.hasPrefix("0.") && format.dropFirst(2).allSatisfy({ $0 == "0" }) ? format.count - 2 : 1
            shown = (converted, symbol, decimals)
        } else if let units = meta?["units"]?.stringValue, let u = usual[units] {
            shown = (value * u.factor + u.offset, u.symbol, u.decimals)
        }
        guard let (number, symbol, decimals) = shown, number.isFinite else { return nil }
        let text = String(format: "%.\(min(decimals, 6))f", number)
        if symbol.isEmpty { return (number, symbol, text) }
        return (number, symbol, symbol == "°" || symbol == "%" ? text + symbol : text + " " + symbol)
    }

    /// A displayUnits formula of the simple forms applied to an SI value; nil for any other.
    static func apply(formula: String, to value: Double) -> Double? {
        let words = formula.split(separator: " ")
        guard words.first == "value" else { return nil }
        if words.count == 1 { return value }
        guard words.count == 3, let k = Double(words[2]) else { return nil }
        switch words[1] {
        case "*": return value * k
        case "/": return value / k
        case "+": return value + k
        case "-": return value - k
        default: return nil
        }
    }
}
