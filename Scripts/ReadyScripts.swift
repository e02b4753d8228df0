// The ready automations of this folder, embedded in the `lookout` binary, so that `lookout demo`
// runs from any folder (and a package installs them without a checkout). The `.lua` files here
// are the source; this file only makes them a target (`ReadyScripts`).

/// The ready scripts' sources by file name (`low-alert.lua` → its bytes).
public enum ReadyScripts {
    /// Every ready script the binary carries.
    public static let all: [String: [UInt8]] = [
        "low-alert.lua": PackageResources.low_alert_lua,
        "nightscout-to-signalk.lua": PackageResources.nightscout_to_signalk_lua,
        "signalk-to-nightscout.lua": PackageResources.signalk_to_nightscout_lua,
        "not-looping.lua": PackageResources.not_looping_lua,
        "daily-report.lua": PackageResources.daily_report_lua,
        "garmin-to-nightscout.lua": PackageResources.garmin_to_nightscout_lua,
        "feedback-on-failure.lua": PackageResources.feedback_on_failure_lua,
    ]
}
