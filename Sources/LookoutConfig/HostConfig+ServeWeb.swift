import Foundation

/// `[serve] web`: the web view on a listener of its own, so that the page need not share the
/// status port (which stays on loopback), optionally with TLS.
///
/// ```toml
/// [serve]
/// web = 8766                       # the web view on 127.0.0.1:8766
///
/// [serve.web]                      # or, in full:
/// port = 8443
/// address = "0.0.0.0"              # default 127.0.0.1 (loopback only); list its names in [serve] hosts
/// tls_cert = "/etc/lookout/web.pem" # PEM certificate chain and key: https instead of http
/// tls_key = "/etc/lookout/web.key"
/// ```
extension HostConfig {
    /// Where the web view listens of its own (`[serve] web`).
    public struct ServeWeb: Sendable, Equatable {
        /// The address it binds (`127.0.0.1` unless configured).
        public var address: String
        /// The port (0: any free port).
        public var port: Int
        /// The PEM certificate chain's path, for https.
        public var tlsCertificate: String?
        /// The PEM private key's path, for https.
        public var tlsKey: String?

        /// Whether it serves https.
        public var tls: Bool { tlsCertificate != nil }
    }

    /// `[serve] web`, or nil when not set (the web view is then on the status port only).
    public var serveWeb: ServeWeb? {
        guard let value = table.value(atPath: ["serve", "web"]), HostConfig.checkServeWeb(value) == nil else { return nil }
        if case .integer(let port) = value { return ServeWeb(address: "127.0.0.1", port: Int(port)) }
        guard let settings = value.tableValue else { return nil }
        func path(_ key: String) -> String? {
            guard let text = settings[key]?.stringValue else { return nil }
            let expanded = LookoutPaths.expandTilde(text, environment: ProcessInfo.processInfo.environment)
            guard !expanded.hasPrefix("/"), let base = baseDirectory else { return expanded }
            return base + "/" + expanded
        }
        let port = settings["port"]?.integerValue.map(Int.init) ?? 0
        return ServeWeb(address: settings["address"]?.stringValue ?? "127.0.0.1", port: port,
                        tlsCertificate: path("tls_cert"), tlsKey: path("tls_key"))
    }

    /// Checks `[serve] web`: a port, or a table of `port`, `address`, `tls_cert` and `tls_key`.
    static func checkServeWeb(_ value: TOMLValue) -> String? {
        if case .integer(let port) = value {
            return (1...65535).contains(port) ? nil : "expected a port number 1-65535, got \(port)"
        }
        guard let settings = value.tableValue else {
            return "expected a port number such as 8766, or a table with port, address, tls_cert and tls_key; got \(HostConfigSchema.shown(value))"
        }
        let known = ["port", "address", "tls_cert", "tls_key"]
        for key in settings.keys.sorted() where !known.contains(key) {
            return "unknown key \"\(key)\" (known: \(known.joined(separator: ", ")))"
        }
        guard case .integer(let port)? = settings["port"], (0...65535).contains(port) else {
            return "port: expected a port number 0-65535, got \(settings["port"].map(HostConfigSchema.shown) ?? "nothing")"
        }
        if let address = settings["address"] {
            guard let text = address.stringValue, isIPAddress(text) else {
                return "address: expected an IP address to listen on such as \"127.0.0.1\" or \"0.0.0.0\", got \(HostConfigSchema.shown(address))"
            }
        }
        for key in ["tls_cert", "tls_key"] {
            if let item = settings[key], item.stringValue?.isEmpty != false {
                return "\(key): expected the path of a PEM file, got \(HostConfigSchema.shown(item))"
            }
        }
        if (settings["tls_cert"] == nil) != (settings["tls_key"] == nil) {
            return "give both tls_cert and tls_key (https), or neither (http)"
        }
        return nil
    }

    /// Whether `text` is an IPv4 or IPv6 address (no name: the listener binds an address).
    static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}
