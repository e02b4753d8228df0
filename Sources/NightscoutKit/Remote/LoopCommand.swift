import Foundation

/// A Loop remote command: what `RemoteCommandGuard` checks and audits, whichever path sends it
/// (Remote 1.0 through `POST /api/v2/notifications/loop`, spec §5.1, or Remote 2.0 through
/// `/api/v2/remotecommands`, spec §5.3, as a `RemoteAction`).
///
/// Closed-loop and autobolus toggles exist only in Remote 2.0: `LoopRemote` (1.0) refuses them
/// with `LoopRemoteError.notSupportedByServer`.
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
    /// Switch closed loop on or off (Remote 2.0 only).
    case closedLoop(active: Bool)
    /// Switch automatic bolus on or off (Remote 2.0 only).
    case autobolus(active: Bool)

    /// The command's kind: `bolus`, `carbs`, `override`, `cancel_override`, `closed_loop`,
    /// `autobolus`.
    public var kind: String {
        switch self {
        case .bolus: return "bolus"
        case .carbs: return "carbs"
        case .override: return "override"
        case .cancelOverride: return "cancel_override"
        case .closedLoop: return "closed_loop"
        case .autobolus: return "autobolus"
        }
    }

    /// The Remote 2.0-only feature this command controls (closed loop, autobolus), nil for the
    /// commands Remote 1.0 carries.
    public var remote2OnlyFeature: LoopRemoteFeature? {
        switch self {
        case .closedLoop: return .closedLoop
        case .autobolus: return .autobolus
        default: return nil
        }
    }

    /// Whether Loop requires a one-time password for it (bolus and carbs).
    public var needsOTP: Bool {
        switch self {
        case .bolus, .carbs: return true
        case .override, .cancelOverride, .closedLoop, .autobolus: return false
        }
    }

    /// A short human description: `bolus 1.5 U`, `carbs 20 g over 3 h`, `override Exercise for 60 min`,
    /// `closed loop off`.
    public var description: String {
        func number(_ d: Double) -> String { d.isFinite && d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d) }
        switch self {
        case .bolus(let units): return "bolus \(number(units)) U"
        case .carbs(let grams, let hours, _): return "carbs \(number(grams)) g" + (hours.map { " over \(number($0)) h" } ?? "")
        case .override(let name, let minutes): return "override \(name)" + (minutes.map { " for \(number($0)) min" } ?? "")
        case .cancelOverride: return "cancel override"
        case .closedLoop(let on): return "closed loop \(on ? "on" : "off")"
        case .autobolus(let on): return "autobolus \(on ? "on" : "off")"
        }
    }
}
