import Crypto
import Foundation
import LookoutWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The keys a remote-command budget is kept under: what receives the commands, however the
/// site is spelled.
///
/// A command is reserved under every key of its site (`keys(for:)`) and, when the site's newest
/// profile names the Loop device it pushes to, under that device's key (`deviceKey`); it counts
/// against the budget of every command sharing any of those keys. So two profiles naming one
/// Nightscout as `http://127.0.0.1:P`, `http://localhost:P`, `http://127.1:P/.` or
/// `http://[::ffff:127.0.0.1]:P` share one budget, and so do two sites pushing to one phone.
public enum RemoteCommandSite {
    /// The site's canonical key, `scheme://host[:port]/path`: scheme and host lowercased, the
    /// host's trailing dots dropped, an IP literal in its canonical form (IPv4 short and numeric
    /// forms such as `127.1` as a dotted quad, IPv4-mapped IPv6 as IPv4, IPv6 compressed in
    /// brackets), the default port (80 for http, 443 for https) dropped, no user, query or
    /// fragment, and the path normalised (`normalisedPath`). `HTTPS://NS.Example.org.:443/./`
    /// and `https://ns.example.org` are one site. Host names are not resolved here (see `keys`).
    public static func key(for url: URL) -> String {
        guard let parts = Parts(url) else { return url.absoluteString }
        return parts.key(host: canonicalHost(parts.host))
    }

    /// Every key the site's budget is kept under: `key(for:)`, and when `resolve` is true and the
    /// host is a name, the key with each address it resolves to (so `localhost` shares with
    /// `127.0.0.1` and `[::1]`). Sorted; the canonical key first.
    public static func keys(for url: URL, resolve: Bool = true) -> [String] {
        guard let parts = Parts(url) else { return [url.absoluteString] }
        let host = canonicalHost(parts.host)
        let primary = parts.key(host: host)
        guard resolve, ipLiteral(parts.host) == nil, !host.isEmpty else { return [primary] }
        let resolved = Set(addresses(of: host).map { parts.key(host: $0) }).subtracting([primary])
        return [primary] + resolved.sorted()
    }

    /// The key of the Loop device a site pushes to (its profile's `loopSettings`): a digest of
    /// the bundle identifier and device token, so the token itself is not stored.
    public static func deviceKey(deviceToken: String, bundleIdentifier: String) -> String? {
        let token = deviceToken.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        let bundle = bundleIdentifier.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard !token.isEmpty, !bundle.isEmpty else { return nil }
        let digest = SHA256.hash(data: Data((bundle + "\n" + token).utf8))
        return "loop-device:" + digest.prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// The device key of a profile's `loopSettings` (`deviceToken`, `bundleIdentifier`), if any.
    public static func deviceKey(loopSettings: JSONValue?) -> String? {
        guard let settings = loopSettings?.objectValue, let token = settings["deviceToken"]?.stringValue,
              let bundle = settings["bundleIdentifier"]?.stringValue else { return nil }
        return deviceKey(deviceToken: token, bundleIdentifier: bundle)
    }

    /// The path as a key: percent escapes decoded (repeatedly), lowercased, `\` read as `/`, empty,
    /// `.` and `..` segments resolved, no trailing slash (`/NS/./a//b/../%2e/` is `/ns/a`). Two
    /// spellings a server may route alike get one key; merging too much only shares a budget.
    public static func normalisedPath(_ path: String) -> String {
        var text = path
        for _ in 0..<8 {
            guard let decoded = text.removingPercentEncoding, decoded != text else { break }
            text = decoded
        }
        var segments: [Substring] = []
        for segment in text.lowercased().replacingOccurrences(of: "\\", with: "/").split(separator: "/") {
            switch segment {
            case ".": continue
            case "..": if !segments.isEmpty { segments.removeLast() }
            default: segments.append(segment)
            }
        }
        return segments.isEmpty ? "" : "/" + segments.joined(separator: "/")
    }

    /// A host as a key: lowercased, trailing dots dropped, an IP literal canonical.
    public static func canonicalHost(_ host: String) -> String {
        if let ip = ipLiteral(host) { return ip }
        var name = host.lowercased()
        while name.hasSuffix(".") { name.removeLast() }
        return name
    }

    /// The canonical form of an IP literal (`127.1` → `127.0.0.1`, `[::ffff:127.0.0.1]` →
    /// `127.0.0.1`, `[0:0::1]` → `[::1]`), or nil when `host` is not one. IPv4 is read as
    /// `inet_aton` (and so the system's resolver) reads it: short, octal, hex and single-number forms.
    public static func ipLiteral(_ host: String) -> String? {
        var text = host
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if let percent = text.firstIndex(of: "%") { text = String(text[..<percent]) }  // a zone
        if text.contains(":") {
            var v6 = in6_addr()
            guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
            return canonical(v6)
        }
        var name = text
        while name.hasSuffix(".") { name.removeLast() }
        guard !name.isEmpty, name.allSatisfy({ $0.isHexDigit || $0 == "." || $0 == "x" || $0 == "X" }) else { return nil }
        var v4 = in_addr()
        guard inet_aton(name, &v4) != 0 else { return nil }
        return canonical(v4)
    }

    /// The addresses `name` resolves to (canonical, IPv4-mapped as IPv4); none when it does not.
    static func addresses(of name: String) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var found: [String] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            if let address = info.pointee.ai_addr {
                switch Int32(info.pointee.ai_family) {
                case AF_INET:
                    found.append(address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { canonical($0.pointee.sin_addr) })
                case AF_INET6:
                    found.append(address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { canonical($0.pointee.sin6_addr) })
                default: break
                }
            }
            next = info.pointee.ai_next
        }
        return Array(Set(found)).sorted()
    }

    private static func canonical(_ v4: in_addr) -> String {
        var address = v4
        var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count)) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func canonical(_ v6: in6_addr) -> String {
        var address = v6
        let bytes = withUnsafeBytes(of: &address) { Array($0) }
        if bytes.prefix(10).allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            var v4 = in_addr()
            withUnsafeMutableBytes(of: &v4) { $0.copyBytes(from: bytes[12..<16]) }
            return canonical(v4)
        }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return "" }
        return "[" + String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "]"
    }

    /// A URL's scheme, host (as written), port and normalised path.
    private struct Parts {
        var scheme: String
        var host: String
        var port: Int?
        var path: String

        init?(_ url: URL) {
            guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
            scheme = (components.scheme ?? "").lowercased()
            host = components.host ?? ""
            if let port = components.port, !(scheme == "http" && port == 80), !(scheme == "https" && port == 443) {
                self.port = port
            }
            path = RemoteCommandSite.normalisedPath(components.percentEncodedPath)
        }

        func key(host: String) -> String {
            scheme + "://" + host + (port.map { ":\($0)" } ?? "") + path
        }
    }
}
