import Foundation
import LookoutWire
import LookoutConfig
import LookoutStore

/// A redacted summary to attach to a bug report (`lookout doctor --bundle FILE`): versions, the
/// doctor's findings, the shape of the configuration (profiles and setting names, URLs without
/// credentials) and the outbox in numbers. It never holds a secret: every secret the
/// configuration can reach is looked up and replaced wherever it might appear.
public struct SupportBundle: Sendable, Codable {
    /// The shape of one configured profile: no setting values, only names and a redacted URL.
    public struct Profile: Sendable, Codable {
        /// The profile's `url` with credentials removed; `nil` when it has no valid one.
        public var url: String?
        /// The names of the profile's settings (secret references excluded), sorted.
        public var settings: [String]
        /// The names (never the values) of the profile's secrets.
        public var secrets: [String]
    }

    /// When the bundle was made, as an ISO 8601 timestamp.
    public var generated: String
    /// The Lookout version that made the bundle.
    public var lookout: String
    /// The operating system version and CPU architecture.
    public var system: String
    /// The doctor's findings.
    public var checks: [DoctorCheck]
    /// Every configured profile, keyed `service.name` (for example `nightscout.home`).
    public var profiles: [String: Profile]
    /// The number of pending and failed outbox items, by state.
    public var outbox: [String: Int]

    /// Builds the bundle from a doctor run.
    public static func make(doctor: Doctor, checks: [DoctorCheck], version: String) async -> SupportBundle {
        var profiles: [String: Profile] = [:]
        if case .success(let config) = doctor.config {
            for service in HostConfig.knownServices {
                for name in config.profiles(service: service) {
                    guard let p = config.profile(service: service, name: name) else { continue }
                    let url = (try? p.string("url")).flatMap { $0 }.flatMap(URL.init(string:)).map(Redaction.url)
                    profiles["\(service).\(name)"] = Profile(url: url, settings: p.settings.keys.sorted(), secrets: p.secretNames)
                }
            }
        }
        var outbox: [String: Int] = [:]
        if let store = try? StateBackends.shared(paths: doctor.paths),
            let items = try? await store.items(site: nil, states: [.pending, .failed], limit: 100_000)
        {
            for item in items { outbox[item.state.rawValue, default: 0] += 1 }
        }
        let formatter = ISO8601DateFormatter()
        return SupportBundle(
            generated: formatter.string(from: Date()), lookout: version,
            system: "\(ProcessInfo.processInfo.operatingSystemVersionString) (\(Self.architecture))",
            checks: checks, profiles: profiles, outbox: outbox)
    }

    /// The bundle as pretty JSON, with every secret reachable from `config` redacted.
    public func json(secrets: [String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let text = (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return Redaction.text(text, secrets: secrets) + "\n"
    }

    /// Every secret value the configuration's profiles can reach (environment or files).
    public static func reachableSecrets(config: HostConfig, environment: [String: String]) -> [String] {
        var values: [String] = []
        for service in HostConfig.knownServices {
            for name in config.profiles(service: service) {
                for secret in config.profile(service: service, name: name)?.secretNames ?? [] {
                    if let s = try? config.secret(service: service, profile: name, name: secret, environment: environment) {
                        values.append(s.value)
                    }
                }
            }
        }
        return values
    }

    static var architecture: String {
        #if arch(x86_64)
        "x86_64"
        #elseif arch(arm64)
        "arm64"
        #else
        "unknown"
        #endif
    }
}
