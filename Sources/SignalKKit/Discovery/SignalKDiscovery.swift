import Foundation

/// A Signal K server endpoint found by mDNS (contract: shared/specs/signalk.md §1.1).
public struct SignalKService: Sendable, Hashable {
    /// The instance name (`Spike Server`).
    public var name: String
    /// The service type without domain or trailing dot (`_signalk-ws._tcp`).
    public var type: String
    /// SRV target host without the trailing dot (`spike.local`).
    public var host: String
    /// The SRV port.
    public var port: Int
    /// IPv4 then IPv6 addresses of `host` (may be empty when no A/AAAA record was seen).
    public var addresses: [String]
    /// TXT key/values, keys lowercased (`txtvers`, `roles`, `self`, `swname`, `swvers`, …).
    public var txt: [String: String]

    /// An endpoint from its discovered parts.
    public init(name: String, type: String, host: String, port: Int, addresses: [String], txt: [String: String]) {
        self.name = name
        self.type = type
        self.host = host
        self.port = port
        self.addresses = addresses
        self.txt = txt
    }

    /// `_signalk-https._tcp` / `_signalk-wss._tcp`: the server speaks TLS.
    public var isTLS: Bool { type.hasPrefix("_signalk-https.") || type.hasPrefix("_signalk-wss.") }

    /// `roles` split on `,` and trimmed (`master, main` → `["master", "main"]`).
    public var roles: [String] {
        (txt["roles"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The `self` TXT key without a `vessels.` prefix (both forms occur).
    public var selfURN: String? {
        guard let s = txt["self"], !s.isEmpty else { return nil }
        return s.hasPrefix("vessels.") ? String(s.dropFirst("vessels.".count)) : s
    }

    /// The host part for URLs: the first IPv4 address, else the first IPv6 (bracketed), else `host`.
    public var urlHost: String {
        if let v4 = addresses.first(where: { !$0.contains(":") }) { return v4 }
        if let v6 = addresses.first { return "[\(v6)]" }
        return host
    }

    /// `http(s)://<urlHost>:<port>/signalk`: the endpoint-discovery document (§1.2). Clients should
    /// `GET` this and use its `endpoints.v1` URLs rather than the guesses below.
    public var discoveryURL: URL? { URL(string: "\(isTLS ? "https" : "http")://\(urlHost):\(port)/signalk") }

    /// The URL this service type suggests: `ws(s)://…/signalk/v1/stream` for `_signalk-ws(s)` and
    /// `_sk`, `http(s)://…/signalk/v1/api/` for `_signalk-http(s)`.
    public var url: URL? {
        if type.hasPrefix("_signalk-http") {
            return URL(string: "\(isTLS ? "https" : "http")://\(urlHost):\(port)/signalk/v1/api/")
        }
        return URL(string: "\(isTLS ? "wss" : "ws")://\(urlHost):\(port)/signalk/v1/stream")
    }
}

/// mDNS / DNS-SD discovery of Signal K servers with plain UDP sockets (no avahi or other daemon).
///
/// ```swift
/// let services = try await SignalKDiscovery.browse(timeout: .seconds(3))
/// // or only on loopback (nothing leaves the machine):
/// let local = try await SignalKDiscovery.browse(timeout: .seconds(2), interfaces: [.loopback])
/// ```
/// Many boats have mDNS off, so an app must also allow entering host:port by hand (§1.1).
public enum SignalKDiscovery {
    /// `_signalk-ws._tcp`, `_signalk-http._tcp`, the legacy `_sk._tcp`, and the TLS variants.
    public static let defaultServiceTypes = [
        "_signalk-ws._tcp", "_signalk-http._tcp", "_sk._tcp", "_signalk-wss._tcp", "_signalk-https._tcp",
    ]

    /// Browses for `timeout` (queries at 0 s, 1 s, 3 s, 7 s, … within it) and returns the resolved
    /// services sorted by type then name.
    ///
    /// - Parameters:
    ///   - serviceTypes: types without domain (`.local` is appended).
    ///   - interfaces: IPv4 interfaces to query on; `nil` means every interface that is up and
    ///     loopback or multicast-capable (``MDNSInterface/available()``).
    /// - Throws: ``MDNSError`` (no interface, socket failures, no query could be sent) or
    ///   `CancellationError` when the task is cancelled.
    public static func browse(timeout: Duration = .seconds(3), serviceTypes: [String] = defaultServiceTypes,
                              interfaces: [MDNSInterface]? = nil) async throws -> [SignalKService] {
        let ifaces = interfaces ?? MDNSInterface.available()
        guard !ifaces.isEmpty else {
            throw MDNSError.noInterfaces(interfaces == nil ? "no IPv4 interface is up" : "the interface list is empty")
        }
        let types = serviceTypes.map { MDNSName(labels: MDNSName($0).labels + ["local"]) }
        let found = try await MDNSQuerier(serviceTypes: types, interfaces: ifaces).browse(timeout: timeout)
        return found.map { service(from: $0) }
    }

    static func service(from i: MDNSServiceInstance) -> SignalKService {
        let typeLabels = i.serviceType.labels.dropLast(i.serviceType.labels.last?.lowercased() == "local" ? 1 : 0)
        return SignalKService(
            name: i.instance.labels.first ?? "",
            type: typeLabels.joined(separator: "."),
            host: i.host.labels.joined(separator: "."),
            port: Int(i.port),
            addresses: i.addresses,
            txt: i.txt)
    }
}
