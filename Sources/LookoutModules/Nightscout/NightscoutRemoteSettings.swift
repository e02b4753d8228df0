import Foundation
import LookoutConfig
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

    /// The keys that make a profile a remote-command profile (one that takes part in the
    /// strictest-limits merge of its site).
    static let limitKeys = ["remote", "max_bolus", "max_carbs", "max_bolus_per_hour", "max_carbs_per_hour",
                            "min_interval", "duplicate_window", "overrides", "toggles"]

    /// Reads the settings of `[nightscout.NAME]`. The limits are the strictest of this profile's
    /// and those of every other profile naming the same site (however spelled: any key of
    /// `RemoteCommandSite.keys(for:)` in common, host names resolved) with any of `limitKeys`:
    /// the smallest maxima, the longest interval and duplicate window, only the overrides and toggles all of them allow. A script cannot pick the laxest profile of a
    /// site. `live` stays this profile's own (a dry-run profile sends nothing either way).
    /// - Throws: `ConfigError` naming the key and line of a bad value (never a secret), also of
    ///   another profile of the same site.
    static func read(_ profile: HostConfig.Profile, config: HostConfig, environment: [String: String]) throws(ConfigError)
        -> NightscoutRemoteSettings
    {
        var limits = try ownLimits(profile)
        if let site = siteKeys(profile) {
            for name in config.profiles(service: "nightscout") where name != profile.name {
                guard let other = config.profile(service: "nightscout", name: name),
                      limitKeys.contains(where: { other[$0] != nil }),
                      let keys = siteKeys(other), !site.isDisjoint(with: keys) else { continue }
                limits = strictest(limits, try ownLimits(other))
            }
        }
        let fallback: Bool
        switch try profile.string("remote_fallback") ?? "none" {
        case "v1": fallback = true
        case "none": fallback = false
        default: throw profile.error(key: "remote_fallback", "expected \"v1\" or \"none\"")
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

    /// The limits one profile configures (with its own `live`), validated.
    static func ownLimits(_ profile: HostConfig.Profile) throws(ConfigError) -> TherapyLimits {
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
        switch try profile.string("remote") ?? "dry-run" {
        case "live": limits.live = true
        case "dry-run": limits.live = false
        default: throw profile.error(key: "remote", "expected \"live\" or \"dry-run\"")
        }
        do {
            return try limits.validated()
        } catch {
            throw profile.error(key: "max_bolus", error.description)
        }
    }

    /// The budget keys of the profile's `url` (`NightscoutRemote.siteKeys`), or nil when it has
    /// none or it is not a site URL.
    static func siteKeys(_ profile: HostConfig.Profile) -> Set<String>? {
        guard let url = try? profile.string("url"),
              let configuration = try? NightscoutConfiguration(site: url, credentials: .none) else { return nil }
        return Set(NightscoutRemote.siteKeys(configuration.siteURL))
    }

    /// Each limit of `a` and `b` at its strictest; `live` from `a`.
    static func strictest(_ a: TherapyLimits, _ b: TherapyLimits) -> TherapyLimits {
        TherapyLimits(
            maxBolusUnits: min(a.maxBolusUnits, b.maxBolusUnits), maxCarbsGrams: min(a.maxCarbsGrams, b.maxCarbsGrams),
            maxBolusUnitsPerHour: min(a.maxBolusUnitsPerHour, b.maxBolusUnitsPerHour),
            maxCarbsGramsPerHour: min(a.maxCarbsGramsPerHour, b.maxCarbsGramsPerHour),
            minimumInterval: max(a.minimumInterval, b.minimumInterval),
            allowedOverrides: a.allowedOverrides.intersection(b.allowedOverrides),
            duplicateWindow: max(a.duplicateWindow, b.duplicateWindow), live: a.live,
            allowedToggles: a.allowedToggles.intersection(b.allowedToggles))
    }
}
