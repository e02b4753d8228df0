import Foundation
import NightscoutKit

/// A profile's Loop remote-command settings, read from the host config only (scripts cannot
/// change them):
///
/// ```toml
/// [nightscout.home]
/// otp_url_env = "LOOP_OTP_URL"   # the otpauth:// URL Loop shows (a secret: _env or _file)
/// remote = "live"                # default "dry-run": log what would be sent, send nothing
/// max_bolus = 2.0                # U per command
/// max_bolus_per_hour = 4.0       # U in any 60 minutes, sent and in flight
/// max_carbs = 50                 # g per command
/// max_carbs_per_hour = 100
/// min_interval = "5m"            # between any two commands
/// duplicate_window = "15m"       # the same command again is refused within this
/// overrides = ["Exercise", "Pre-Meal"]
/// toggles = ["closed_loop"]       # Remote 2.0 switches that may be sent (closed_loop, autobolus)
/// remote_fallback = "v1"         # remote_command falls back to Remote 1.0 on a site without 2.0
/// ```
///
/// Every limit defaults to refusing: without `max_bolus`, no bolus is sent.
struct NightscoutRemoteSettings: Sendable {
    /// The limits the guard enforces (`live` from `remote`).
    var limits: TherapyLimits
    /// The OTP generator, when `otp_url_…` is configured.
    var otp: TOTP?
    /// Whether Remote 2.0 commands may go through Remote 1.0 on a site without 2.0
    /// (`remote_fallback = "v1"`; default `"none"`).
    var fallbackToV1 = false

    /// No remote commands (clients made with `nightscout.connect`).
    static let none = NightscoutRemoteSettings(limits: .refuseAll, otp: nil)

    /// Reads the settings of `[nightscout.NAME]`.
    /// - Throws: `ConfigError` naming the key and line of a bad value (never a secret).
    static func read(_ profile: HostConfig.Profile, config: HostConfig, environment: [String: String]) throws(ConfigError)
        -> NightscoutRemoteSettings
    {
        func amount(_ key: String) throws(ConfigError) -> Double {
            guard let value = profile[key] else { return 0 }
            guard let d = value.doubleValue, d.isFinite, d >= 0 else {
                throw profile.error(key: key, "expected a non-negative number")
            }
            return d
        }
        var limits = TherapyLimits(
            maxBolusUnits: try amount("max_bolus"), maxCarbsGrams: try amount("max_carbs"),
            maxBolusUnitsPerHour: try amount("max_bolus_per_hour"), maxCarbsGramsPerHour: try amount("max_carbs_per_hour"),
            minimumInterval: try profile.duration("min_interval") ?? 0,
            allowedOverrides: Set(try profile.strings("overrides") ?? []),
            duplicateWindow: try profile.duration("duplicate_window") ?? 0,
            allowedToggles: Set(try profile.strings("toggles") ?? []))
        for toggle in limits.allowedToggles.sorted() where !TherapyLimits.toggleKinds.contains(toggle) {
            throw profile.error(key: "toggles", "unknown toggle \"\(toggle)\" (known: autobolus, closed_loop)")
        }
        let fallback: Bool
        switch try profile.string("remote_fallback") ?? "none" {
        case "v1": fallback = true
        case "none": fallback = false
        default: throw profile.error(key: "remote_fallback", "expected \"v1\" or \"none\"")
        }
        switch try profile.string("remote") ?? "dry-run" {
        case "live": limits.live = true
        case "dry-run": limits.live = false
        default: throw profile.error(key: "remote", "expected \"live\" or \"dry-run\"")
        }
        do {
            limits = try limits.validated()
        } catch {
            throw profile.error(key: "max_bolus", error.description)
        }
        var otp: TOTP?
        if let url = try config.secret(service: "nightscout", profile: profile.name, name: "otp_url", environment: environment) {
            do {
                otp = try TOTP(url: url.value)
            } catch {
                throw profile.error(key: profile.hasSecret("otp_url") ? "otp_url" : "otp_url_env",
                                    "the OTP URL is not usable: \(error)")
            }
        }
        return NightscoutRemoteSettings(limits: limits, otp: otp, fallbackToV1: fallback)
    }
}
