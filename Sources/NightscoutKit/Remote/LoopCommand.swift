import Foundation

/// A Loop remote command (spec §5.1, Remote 1.0 through `POST /api/v2/notifications/loop`).
///
/// Closed-loop and autobolus toggles exist only in the unverified Remote 2.0 protocol (spec
/// §5.3), which cgm-remote-monitor does not serve, so they are not commands here.
public enum LoopCommand: Sendable, Hashable, CustomStringConvertible {
    /// Deliver a bolus of `units` insulin units (needs an OTP).
    case bolus(units: Double)
    /// Record `grams` of carbs absorbed over `absorptionHours` (Loop's default 3 h), eaten at
    /// `startDate` (default now) (needs an OTP).
    case carbs(grams: Double, absorptionHours: Double? = nil, startDate: Date? = nil)
    /// Start the override preset `name` for `durationMinutes` (nil: until cancelled).
    case override(name: String, durationMinutes: Double? = nil)
    /// Cancel the active override.
    case cancelOverride

    /// The command's kind: `bolus`, `carbs`, `override`, `cancel_override`.
    public var kind: String {
        switch self {
        case .bolus: return "bolus"
        case .carbs: return "carbs"
        case .override: return "override"
        case .cancelOverride: return "cancel_override"
        }
    }

    /// Whether Loop requires a one-time password for it (bolus and carbs).
    public var needsOTP: Bool {
        switch self {
        case .bolus, .carbs: return true
        case .override, .cancelOverride: return false
        }
    }

    /// A short human description: `bolus 1.5 U`, `carbs 20 g over 3 h`, `override Exercise for 60 min`.
    public var description: String {
        func number(_ d: Double) -> String { d.isFinite && d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d) }
        switch self {
        case .bolus(let units): return "bolus \(number(units)) U"
        case .carbs(let grams, let hours, _): return "carbs \(number(grams)) g" + (hours.map { " over \(number($0)) h" } ?? "")
        case .override(let name, let minutes): return "override \(name)" + (minutes.map { " for \(number($0)) min" } ?? "")
        case .cancelOverride: return "cancel override"
        }
    }
}
