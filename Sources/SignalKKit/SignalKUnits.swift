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
