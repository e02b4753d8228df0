import Foundation

/// `[serve] hosts` and `[serve] public_url`: whom the status server answers, and the address the
/// acknowledgement links in notifications use.
///
/// ```toml
/// [serve]
/// hosts = ["lookout.tail1234.ts.net"]            # Host names besides loopback (a reverse proxy)
/// public_url = "https://lookout.tail1234.ts.net" # base of ack links (default http://127.0.0.1:PORT)
/// ```
extension HostConfig {
    /// The names every status server answers to: loopback only.
    public static let loopbackHostNames: Set<String> = ["localhost", "127.0.0.1", "::1"]

    /// `[serve] hosts`, lower case, plus the host of `[serve] public_url` (loopback names are
    /// always allowed and not listed here).
    public var serveHosts: [String] {
        var names: [String] = []
        if case .array(let items)? = table.value(atPath: ["serve", "hosts"]) {
            names = items.compactMap(\.stringValue).map { HostConfig.normalizedHostName($0) }
        }
        if let url = servePublicURL, let host = URLComponents(string: url)?.host {
            names.append(HostConfig.normalizedHostName(host))
        }
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }

    /// `[serve] public_url` without trailing slashes, or nil when not set.
    public var servePublicURL: String? {
        guard var text = table.value(atPath: ["serve", "public_url"])?.stringValue, !text.isEmpty else { return nil }
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// A host name as compared: lower case, without brackets or one trailing dot.
    public static func normalizedHostName(_ name: String) -> String {
        var text = name.lowercased()
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// Checks `[serve] hosts`: a list of host names or IP addresses, without scheme, port or path.
    static func checkServeHosts(_ value: TOMLValue) -> String? {
        guard case .array(let items) = value else {
            return "expected a list of host names such as [\"lookout.example.ts.net\"], got \(HostConfigSchema.shown(value))"
        }
        for (index, item) in items.enumerated() {
            guard let text = item.stringValue else {
                return "hosts[\(index + 1)]: expected a host name (a string), got \(HostConfigSchema.shown(item))"
            }
            if let problem = hostNameProblem(text) { return "hosts[\(index + 1)]: \(problem)" }
        }
        return nil
    }

    /// Why `text` is not a host name (nil when it is one).
    static func hostNameProblem(_ text: String) -> String? {
        if text.isEmpty { return "expected a host name, got an empty string" }
        if text.contains("://") || text.contains("/") {
            return "\"\(text)\" is not a host name: give the name alone, without scheme or path (e.g. \"lookout.example.ts.net\")"
        }
        if text.contains("*") { return "\"\(text)\" is not a host name: wildcards are not accepted, list each name" }
        if text.hasPrefix("[") {
            let inner = text.dropFirst()
            guard inner.hasSuffix("]"), inner.dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                return "\"\(text)\" is not an IPv6 address in brackets such as \"[fd00::1]\" (no port)"
            }
            return nil
        }
        if text.contains(":") {
            return "\"\(text)\" is not a host name: give it without a port (every port of the name is accepted)"
        }
        let allowed = text.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-._".unicodeScalars.contains($0)) }
        return allowed ? nil : "\"\(text)\" is not a host name (letters, digits, '-', '.' only)"
    }

    /// Checks `[serve] public_url`: an http or https URL with a host, no query, fragment or credentials.
    static func checkPublicURL(_ value: TOMLValue) -> String? {
        guard let text = value.stringValue else {
            return "expected a URL such as \"https://lookout.example.ts.net\", got \(HostConfigSchema.shown(value))"
        }
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty
        else {
            return "expected an http or https URL such as \"https://lookout.example.ts.net\", got \"\(text)\""
        }
        if url.user != nil || url.password != nil { return "must not hold credentials (user:password@)" }
        if url.query != nil || url.fragment != nil { return "must not have a query or fragment, got \"\(text)\"" }
        return nil
    }
}
