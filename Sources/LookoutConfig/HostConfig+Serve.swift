import Foundation

/// `[serve]`: settings of `lookout serve`.
///
/// ```toml
/// [serve]
/// timezone = "Europe/Berlin"   # schedules' time zone (else $TZ, else the system's)
/// scripts = "~/lookout/Scripts" # or ["a.lua", "b.lua"]; default: ./Scripts
/// status_port = 8765            # loopback status endpoint; 0 = off
/// ```
extension HostConfig {
    /// The default port of the status endpoint.
    public static let defaultStatusPort = 8765

    /// The time zone schedules use: `[serve] timezone`, else `$TZ`, else the system's.
    public var serveTimeZone: TimeZone {
        HostConfig.timeZone(configured: table.value(atPath: ["serve", "timezone"])?.stringValue,
                            environment: ProcessInfo.processInfo.environment)
    }

    /// The time zone for a configured name and an environment (see `serveTimeZone`).
    public static func timeZone(configured: String?, environment: [String: String]) -> TimeZone {
        if let configured, let zone = TimeZone(identifier: configured) { return zone }
        if var tz = environment["TZ"], !tz.isEmpty {
            if tz.hasPrefix(":") { tz.removeFirst() }
            if let zone = TimeZone(identifier: tz) { return zone }
        }
        return TimeZone.current
    }

    /// `[serve] scripts` as paths (`~` expanded), or nil when not set.
    public var serveScripts: [String]? {
        guard let value = table.value(atPath: ["serve", "scripts"]) else { return nil }
        let raw: [String]
        if let text = value.stringValue {
            raw = [text]
        } else if case .array(let items) = value {
            raw = items.compactMap(\.stringValue)
        } else {
            return nil
        }
        let environment = ProcessInfo.processInfo.environment
        return raw.map { path in
            let expanded = LookoutPaths.expandTilde(path, environment: environment)
            guard !expanded.hasPrefix("/"), let base = baseDirectory else { return expanded }
            return base + "/" + expanded
        }
    }

    /// `[serve] status_port`, else `defaultStatusPort`.
    public var serveStatusPort: Int {
        if case .integer(let port)? = table.value(atPath: ["serve", "status_port"]) { return Int(port) }
        return HostConfig.defaultStatusPort
    }
}
