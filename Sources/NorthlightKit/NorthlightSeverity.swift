/// How bad a bug is (`severity` in `POST /bugs`; the server assumes `medium` when absent).
public enum NorthlightSeverity: String, Sendable, CaseIterable, Codable {
    /// Cosmetic or minor.
    case low
    /// The default.
    case medium
    /// A feature does not work.
    case high
    /// Data loss, crash, security.
    case critical

    /// Parses a severity, naming the allowed values on failure.
    /// - Throws: `NorthlightError.invalidInput("severity: …")`.
    public static func parse(_ text: String) throws(NorthlightError) -> NorthlightSeverity {
        guard let s = NorthlightSeverity(rawValue: text.lowercased()) else {
            throw .invalidInput("severity: expected low, medium, high or critical, got \"\(text.prefix(40))\"")
        }
        return s
    }
}
