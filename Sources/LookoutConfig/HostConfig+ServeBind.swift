import Foundation

/// `[serve.bind]`: one script, many sites. A script bound to profiles runs once per matching
/// profile, each in its own Lua state (and, with `serve --cluster`, under its own lease), with
/// that profile as its `site` (Nightscout) or `boat` (Signal K) setting.
///
/// ```toml
/// [serve.bind]
/// "low-alert.lua" = ["nightscout.*"]                  # every Nightscout profile
/// "anchor-watch.lua" = ["signalk.boat-*", "signalk.tender"]
/// ```
extension HostConfig {
    /// The services a script can be bound to, and the setting each binding fills.
    public static let bindableServices: [String: String] = ["nightscout": "site", "signalk": "boat"]

    /// The bindings of a script file (its name or a path suffix is the key), sorted; empty when
    /// the script is not bound (it runs once, as always).
    public func serveBindings(file: String) -> [ScriptBinding] {
        guard let table = table.value(atPath: ["serve", "bind"])?.tableValue else { return [] }
        let matches = table.entries.filter { !$0.key.isEmpty && (file == $0.key || file.hasSuffix("/" + $0.key)) }
        guard let best = matches.max(by: { $0.key.count < $1.key.count }), case .array(let items) = best.value else { return [] }
        var found = Set<ScriptBinding>()
        for pattern in items.compactMap(\.stringValue) {
            guard let dot = pattern.firstIndex(of: ".") else { continue }
            let service = String(pattern[..<dot]), glob = String(pattern[pattern.index(after: dot)...])
            for profile in profiles(service: service) where ScriptBinding.matches(profile, glob) {
                found.insert(ScriptBinding(service: service, profile: profile))
            }
        }
        return found.sorted { ($0.service, $0.profile) < ($1.service, $1.profile) }
    }

    /// Checks `[serve.bind]`: each value a list of `"service.profile"` patterns (`*` matches any
    /// run of characters) over a bindable service.
    static func checkServeBind(_ value: TOMLValue) -> String? {
        guard let table = value.tableValue else { return "expected a table: \"script.lua\" = [\"nightscout.*\"]" }
        for entry in table.entries {
            guard case .array(let items) = entry.value, !items.isEmpty else {
                return "\(ConfigWording.quotedKey(entry.key)): expected a list of profile patterns such as [\"nightscout.*\"]"
            }
            for item in items {
                guard let pattern = item.stringValue, let dot = pattern.firstIndex(of: "."),
                      bindableServices[String(pattern[..<dot])] != nil, pattern.index(after: dot) < pattern.endIndex
                else {
                    return "\(ConfigWording.quotedKey(entry.key)): expected \"nightscout.NAME\" or \"signalk.NAME\" "
                        + "(NAME may contain *), got \(item)"
                }
            }
        }
        return nil
    }
}

/// One binding of a script to a profile (`[serve.bind]`).
public struct ScriptBinding: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `nightscout` or `signalk`.
    public var service: String
    /// The profile's name.
    public var profile: String

    /// A binding.
    public init(service: String, profile: String) {
        self.service = service
        self.profile = profile
    }

    /// `profile` (what follows the script's name in its work name: `low-alert.lua@child1`).
    public var description: String { profile }

    /// The setting the binding fills (`site` or `boat`).
    public var setting: String { HostConfig.bindableServices[service] ?? "site" }

    /// Whether `name` matches `glob`, where `*` matches any run of characters.
    static func matches(_ name: String, _ glob: String) -> Bool {
        let parts = glob.split(separator: "*", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1 else { return name == glob }
        var rest = Substring(name)
        guard rest.hasPrefix(parts[0]) else { return false }
        rest = rest.dropFirst(parts[0].count)
        for part in parts.dropFirst().dropLast() where !part.isEmpty {
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        return rest.hasSuffix(parts.last!)
    }
}
