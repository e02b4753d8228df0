import Foundation
import LookoutConfig
import LookoutStore
import NightscoutKit
import NorthlightKit

/// The redacted diagnostics `lookout bug` offers to attach: Lookout's version, the OS, the
/// config's profile NAMES per service (no URLs, keys or settings), the outbox depth and the last
/// outbox errors. Everything passes `redact`, which removes the given secrets and any URL
/// credentials, so a secret that slipped into an error text is not sent, and then loses every
/// URL and profile host (an outbox error names the server it could not reach).
public struct DiagnosticsSummary: Sendable, Equatable {
    /// The lines of the summary.
    public var lines: [String]

    /// The summary as text.
    public var text: String { lines.joined(separator: "\n") }

    /// Builds the summary.
    /// - Parameters:
    ///   - secrets: values to blank out wherever they appear (the API key in use, resolved tokens).
    ///   - store: the state database (outbox), if it can be opened.
    public static func collect(version: String, config: HostConfig, store: (any StateBackend)?, secrets: [String]) async -> DiagnosticsSummary {
        var lines = ["lookout \(version)", "os: \(DeviceInfo.current(appVersion: version).osVersion)"]
        let profiles = HostConfig.knownServices.compactMap { service -> String? in
            let names = config.profiles(service: service)
            return names.isEmpty ? nil : "\(service): \(names.joined(separator: ", "))"
        }
        lines.append("profiles: " + (profiles.isEmpty ? "none" : profiles.joined(separator: "; ")))
        if let store, let items = try? await store.items(site: nil, states: [.pending, .failed], limit: 10_000) {
            let pending = items.filter { $0.state == .pending }.count
            lines.append("outbox: \(pending) pending, \(items.count - pending) failed")
            let recent = items.filter { $0.lastError != nil }.sorted { $0.created > $1.created }.prefix(3)
            if !recent.isEmpty {
                lines.append("last errors:")
                for item in recent {
                    let error: String = item.lastError ?? ""
                    lines.append("  " + item.collectionName + ": " + String(error.prefix(200)))
                }
            }
        } else {
            lines.append("outbox: unavailable")
        }
        // The promise is "no URLs": every URL goes, and so does each profile's host where an error names it bare.
        let hosts = HostConfig.knownServices.flatMap { service in
            config.profiles(service: service).compactMap { name in
                (try? config.profile(service: service, name: name)?.string("url")).flatMap { $0 }.flatMap { URL(string: $0)?.host }
            }
        }
        return DiagnosticsSummary(lines: lines.map { withoutURLs(redact($0, secrets: secrets), hosts: hosts) })
    }

    /// `text` with every URL replaced by `<url>` and each of `hosts` by `<host>`.
    public static func withoutURLs(_ text: String, hosts: [String]) -> String {
        var out = text
        if let urls = try? NSRegularExpression(pattern: #"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'"<>]*[^\s'"<>:.,;)]"#) {
            out = urls.stringByReplacingMatches(in: out, range: NSRange(out.startIndex..., in: out), withTemplate: "<url>")
        }
        for host in Set(hosts) where host.count >= 3 { out = out.replacingOccurrences(of: host, with: "<host>") }
        return out
    }

    /// `text` without any of `secrets` (4 characters or longer) and without `user:password@` in URLs.
    public static func redact(_ text: String, secrets: [String]) -> String {
        var out = text
        for secret in secrets where secret.count >= 4 { out = out.replacingOccurrences(of: secret, with: "<redacted>") }
        if let credentials = try? NSRegularExpression(pattern: #"([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@]+@"#) {
            out = credentials.stringByReplacingMatches(in: out, range: NSRange(out.startIndex..., in: out), withTemplate: "$1<redacted>@")
        }
        return out
    }
}
