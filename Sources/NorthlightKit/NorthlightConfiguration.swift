import Foundation

/// Where and as whom a `NorthlightClient` talks: the project's API key, the API's base URL, and
/// what the client says about itself (`X-Platform`, the app version in device info).
///
/// The API key is never shown: `description` and the mirror redact it.
public struct NorthlightConfiguration: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The public Northlight API (`https://northlight.app/api/v1`).
    public static let defaultBaseURL = URL(string: "https://northlight.app/api/v1")!

    /// The project's API key (header `X-API-Key`). Never log or display it.
    public let apiKey: String
    /// The API's base URL; endpoints are appended (`<base>/feedback`).
    public let baseURL: URL
    /// The platform sent as `X-Platform` (by default the one Lookout runs on: `linux`, `macos`).
    public var platform: String
    /// The app version reported in device info.
    public var appVersion: String
    /// Per-request timeout in seconds.
    public var timeout: TimeInterval
    /// How long the public board and roadmap are cached, in seconds (0: no cache).
    public var cacheTTL: TimeInterval

    /// The platform this process runs on, as `X-Platform` names it.
    public static var hostPlatform: String {
        #if os(macOS)
        return "macos"
        #elseif os(Linux)
        return "linux"
        #elseif os(Windows)
        return "windows"
        #else
        return "unknown"
        #endif
    }

    /// A configuration; validates the key and the URL.
    /// - Throws: `NorthlightError.invalidAPIKey` for an empty key or one with characters a header
    ///   cannot carry; `NorthlightError.invalidInput("baseURL: …")` for a URL that is not HTTPS
    ///   (plain HTTP is allowed only to a loopback address), has credentials, a query or a fragment.
    public init(apiKey: String, baseURL: URL = NorthlightConfiguration.defaultBaseURL, platform: String = hostPlatform,
                appVersion: String = "0.0.0", timeout: TimeInterval = 30, cacheTTL: TimeInterval = 300) throws(NorthlightError) {
        let key = apiKey.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !key.isEmpty, key.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw .invalidAPIKey
        }
        try Self.check(baseURL)
        self.apiKey = key
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = URL(string: base) ?? baseURL
        self.platform = platform
        self.appVersion = appVersion
        self.timeout = timeout
        self.cacheTTL = cacheTTL
    }

    /// Checks the rule "HTTPS, or HTTP to loopback only".
    static func check(_ url: URL) throws(NorthlightError) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw .invalidInput("baseURL: expected https://host[:port][/path]")
        }
        guard url.user == nil, url.password == nil else {
            throw .invalidInput("baseURL: must not contain credentials")
        }
        guard url.query == nil, url.fragment == nil else {
            throw .invalidInput("baseURL: must not have a query or fragment")
        }
        switch scheme {
        case "https": return
        case "http":
            guard isLoopback(host) else {
                throw .invalidInput("baseURL: HTTPS is required (plain HTTP only to a loopback address such as 127.0.0.1)")
            }
        default:
            throw .invalidInput("baseURL: expected an https URL, got scheme \(scheme)")
        }
    }

    /// Whether `host` is a loopback address: `localhost`, 127.0.0.0/8 or `::1`.
    public static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in UInt8(part) != nil }
    }

    /// `Northlight <base URL> (platform …)`; never the key.
    public var description: String { "Northlight \(baseURL.absoluteString) (platform \(platform), key redacted)" }
    /// Same as `description`.
    public var debugDescription: String { description }
    /// A mirror without the key.
    public var customMirror: Mirror {
        Mirror(self, children: ["baseURL": baseURL, "platform": platform, "appVersion": appVersion, "timeout": timeout,
                                "cacheTTL": cacheTTL])
    }
}
