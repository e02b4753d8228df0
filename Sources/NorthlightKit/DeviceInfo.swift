import Foundation

/// What a submission says about the machine (`device_info`). Nothing personal: no host name,
/// user name, addresses or serial numbers. Fields the host cannot tell are left out.
///
/// Feedback carries `model`, `os_version`, `app_version`, `screen_resolution` and `locale`; bug
/// reports add `free_memory`, `battery_level` and `network_type` (seed §API 1 and 2). On a
/// terminal, `screen_resolution` is the terminal size in characters (`120x40`).
public struct DeviceInfo: Sendable, Equatable, Codable {
    /// The machine model (DMI product name on Linux, `hw.model` on macOS) or the CPU architecture.
    public var model: String
    /// The operating system and its version (`Debian GNU/Linux 12 (bookworm), Linux 6.1.0`).
    public var osVersion: String
    /// The app's version.
    public var appVersion: String
    /// The terminal size as `COLUMNSxROWS`, when known.
    public var screenResolution: String?
    /// The locale (`en_US`).
    public var locale: String
    /// Available memory, as `2GB` / `512MB` (bug reports).
    public var freeMemory: String?
    /// Battery charge 0…1, when the machine has a battery (bug reports).
    public var batteryLevel: Double?
    /// `wifi`, `ethernet`, `cellular` or `none` (bug reports), when the OS tells.
    public var networkType: String?

    enum CodingKeys: String, CodingKey {
        case model
        case osVersion = "os_version"
        case appVersion = "app_version"
        case screenResolution = "screen_resolution"
        case locale
        case freeMemory = "free_memory"
        case batteryLevel = "battery_level"
        case networkType = "network_type"
    }

    /// A device description.
    public init(model: String, osVersion: String, appVersion: String, screenResolution: String?, locale: String,
                freeMemory: String? = nil, batteryLevel: Double? = nil, networkType: String? = nil) {
        self.model = model; self.osVersion = osVersion; self.appVersion = appVersion
        self.screenResolution = screenResolution; self.locale = locale
        self.freeMemory = freeMemory; self.batteryLevel = batteryLevel; self.networkType = networkType
    }

    /// The fields feedback carries (without memory, battery and network).
    public var forFeedback: DeviceInfo {
        DeviceInfo(model: model, osVersion: osVersion, appVersion: appVersion, screenResolution: screenResolution, locale: locale)
    }

    /// `2GB` for ≥ 1 GiB (whole GiB), else `512MB`.
    public static func formatMemory(bytes: UInt64) -> String {
        let mib = bytes / (1024 * 1024)
        return mib >= 1024 ? "\(mib / 1024)GB" : "\(mib)MB"
    }
}
