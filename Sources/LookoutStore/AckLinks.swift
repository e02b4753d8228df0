import Crypto
import Foundation
import LookoutConfig
import LookoutWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The system's read(2) and link(2) under names no member of AckLinkKey shadows.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
private func systemLink(_ from: String, _ to: String) -> Int32 { link(from, to) }

/// One alert episode's acknowledgement link: `POST <base>/ack/<alert>?episode=E&expires=X&token=T`,
/// where `token` is an HMAC-SHA256 over alert, episode and expiry with the machine's ack-link key
/// (``AckLinkKey``). The host makes it when it sends a notification about the episode, after the
/// script's code has run; no script can read it. It acknowledges that episode only, once, until
/// `expires`.
public struct AckLink: Sendable, Equatable {
    /// How long a link is valid after it was made: 12 hours (every repeat of an alert brings a fresh one).
    public static let lifetime: TimeInterval = 12 * 3600

    /// The alert id.
    public var alert: String
    /// The episode it acknowledges.
    public var episode: Int64
    /// When it stops working (epoch seconds).
    public var expires: Int64
    /// The capability: base64url of the HMAC (43 characters).
    public var token: String

    /// Creates a link from its parts (as parsed from a request).
    public init(alert: String, episode: Int64, expires: Int64, token: String) {
        self.alert = alert
        self.episode = episode
        self.expires = expires
        self.token = token
    }

    /// The link's path and query: `/ack/<alert>?episode=E&expires=X&token=T`.
    public var pathAndQuery: String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#%,;&=+")
        let id = alert.addingPercentEncoding(withAllowedCharacters: allowed) ?? alert
        return "/ack/\(id)?episode=\(episode)&expires=\(expires)&token=\(token)"
    }

    /// The whole URL under `base` (`http://127.0.0.1:8765` or `[serve] public_url`).
    public func url(base: String) -> String {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        return base + pathAndQuery
    }

    /// The link parts of a request's query, or nil when it has no `token` (a request without a link).
    /// - Throws: `AckLinkError.malformed` when a token comes without a usable episode or expiry.
    public static func parse(alert: String, query: String?) throws(AckLinkError) -> AckLink? {
        let items = URLComponents(string: "?" + (query ?? ""))?.queryItems ?? []
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        guard let token = value("token") else { return nil }
        guard let episode = value("episode").flatMap(Int64.init), let expires = value("expires").flatMap(Int64.init) else {
            throw .malformed
        }
        return AckLink(alert: alert, episode: episode, expires: expires, token: token)
    }
}

/// Why an ack link does not act.
public enum AckLinkError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No token: acting through HTTP needs the link from a notification.
    case missing
    /// A token without episode or expiry.
    case malformed
    /// The token was not made by this machine for this alert, episode and expiry.
    case invalid
    /// The link's time has passed.
    case expired(Int64)

    public var description: String {
        switch self {
        case .missing:
            return "acknowledging through HTTP needs the link from a notification (…/ack/<id>?episode=…&expires=…&token=…); "
                + "on this machine use `lookout ack <id>`"
        case .malformed: return "the link lacks its episode or expiry; use the whole link from the notification"
        case .invalid: return "the link's token is not valid for this alert and episode"
        case .expired(let at):
            return "the link expired at \(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(at)))); "
                + "use the link of a newer notification (or `lookout ack <id>`)"
        }
    }
}

/// The secret that signs ack links: 32 random bytes in `<state>/ack-link.key` (mode 0600, made on
/// first use). Deleting the file (and restarting `serve`) makes every link sent earlier useless.
public struct AckLinkKey: Sendable {
    /// The key file's name in the state folder.
    public static let fileName = "ack-link.key"
    private let bytes: [UInt8]
    private var key: SymmetricKey { SymmetricKey(data: bytes) }

    /// A key from its bytes (tests).
    public init(bytes: [UInt8]) { self.bytes = bytes }

    private static let loaded = Locked<[String: AckLinkKey]>([:])

    /// The key of the state folder of `paths`, made on first use.
    /// - Throws: `AckLinkKeyError` when the file cannot be made or read, or is damaged.
    public static func load(paths: LookoutPaths) throws(AckLinkKeyError) -> AckLinkKey {
        do { _ = try paths.createStateDirectory() } catch {
            throw AckLinkKeyError(file: paths.stateDirectory + "/" + fileName, reason: error.description)
        }
        return try load(stateDirectory: paths.stateDirectory)
    }

    /// The key of the state folder `stateDirectory` (which exists), made on first use.
    public static func load(stateDirectory: String) throws(AckLinkKeyError) -> AckLinkKey {
        let file = stateDirectory + "/" + fileName
        if let cached = loaded.withLock({ $0[file] }) { return cached }
        let bytes = try readOrCreate(file)
        let key = AckLinkKey(bytes: bytes)
        loaded.withLock { $0[file] = key }
        return key
    }

    /// The token for an alert episode and expiry.
    public func token(alert: String, episode: Int64, expires: Int64) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Self.message(alert: alert, episode: episode, expires: expires), using: key)
        return Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// A link for `alert`'s `episode`, valid for `AckLink.lifetime` from `now`.
    public func link(alert: String, episode: Int64, now: Date) -> AckLink {
        let expires = Int64((now.timeIntervalSince1970 + AckLink.lifetime).rounded(.up))
        return AckLink(alert: alert, episode: episode, expires: expires, token: token(alert: alert, episode: episode, expires: expires))
    }

    /// Checks a link's token (in constant time) and expiry.
    public func verify(_ link: AckLink, now: Date) throws(AckLinkError) {
        var text = link.token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard link.token.count == 43, let mac = Data(base64Encoded: text),
              HMAC<SHA256>.isValidAuthenticationCode(
                mac, authenticating: Self.message(alert: link.alert, episode: link.episode, expires: link.expires), using: key)
        else { throw .invalid }
        guard Double(link.expires) > now.timeIntervalSince1970 else { throw .expired(link.expires) }
    }

    private static func message(alert: String, episode: Int64, expires: Int64) -> Data {
        Data("lookout-ack-v1\u{0}\(alert)\u{0}\(episode)\u{0}\(expires)".utf8)
    }

    /// Reads the key file, or makes it: written to a private temporary file first and linked into
    /// place, so two processes starting at once end up with the same key.
    private static func readOrCreate(_ file: String) throws(AckLinkKeyError) -> [UInt8] {
        if let bytes = try readKey(file) { return bytes }
        let fresh = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        let temporary = file + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw AckLinkKeyError(file: file, reason: "cannot create it: " + String(cString: strerror(errno))) }
        let written = fresh.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        defer { unlink(temporary) }
        guard written == fresh.count, synced else { throw AckLinkKeyError(file: file, reason: "cannot write it") }
        if systemLink(temporary, file) != 0 && errno != EEXIST {
            throw AckLinkKeyError(file: file, reason: "cannot create it: " + String(cString: strerror(errno)))
        }
        guard let bytes = try readKey(file) else { throw AckLinkKeyError(file: file, reason: "it vanished while being made") }
        return bytes
    }

    /// The key's bytes, nil when there is no file; a file others can read is made private (0600).
    private static func readKey(_ file: String) throws(AckLinkKeyError) -> [UInt8]? {
        let fd = open(file, O_RDONLY | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw AckLinkKeyError(file: file, reason: "cannot open it: " + String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw AckLinkKeyError(file: file, reason: "it is not a regular file")
        }
        if info.st_mode & 0o077 != 0 { _ = fchmod(fd, 0o600) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
        guard count == 32 else {
            throw AckLinkKeyError(file: file, reason: "it is damaged (\(max(count, 0)) bytes, expected 32); delete it to make "
                + "a new key (links sent earlier stop working)")
        }
        return Array(bytes.prefix(32))
    }
}

/// The ack-link key file cannot be used.
public struct AckLinkKeyError: Error, CustomStringConvertible, Sendable {
    /// The key file.
    public let file: String
    /// Why.
    public let reason: String

    public var description: String { "ack link key \(file): \(reason)" }
}
