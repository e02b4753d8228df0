import Foundation

/// What is stored per server: the installation's access-request `clientId`, the token, a pending
/// access request's `href` and the DENIED flag (contract §6.3). Its `description` never shows the token.
public struct SignalKTokenRecord: Codable, Sendable, Equatable, CustomStringConvertible {
    /// The persistent UUID v4 sent as `clientId` in access requests (one per installation and server).
    public var clientId: String
    /// The token (a JWT), if one was granted or obtained by login.
    public var token: String?
    /// Where to poll a pending access request (`/signalk/v1/requests/<id>`).
    public var pendingHref: String?
    /// `true` after the administrator denied the access request.
    public var denied: Bool
    /// When the token expires (JWT `exp` or the server's `expirationTime`), if known.
    public var expires: Date?

    /// Creates a record.
    public init(clientId: String = UUID().uuidString.lowercased(), token: String? = nil, pendingHref: String? = nil,
                denied: Bool = false, expires: Date? = nil) {
        self.clientId = clientId; self.token = token; self.pendingHref = pendingHref
        self.denied = denied; self.expires = expires
    }

    /// A summary without the token.
    public var description: String {
        "SignalKTokenRecord(clientId: \(clientId), token: \(token == nil ? "none" : "<redacted>"), "
            + "pending: \(pendingHref != nil), denied: \(denied))"
    }
}

/// Keeps the token and clientId of one server in a JSON file readable only by the owner (mode 0600)
/// inside a directory the caller chooses, e.g. `<state>/tokens/signalk-<host>.json`.
///
/// The file is written to a temporary file created with mode 0600 and renamed over the old one, so
/// the token is never world-readable, not even briefly. The directory is created with mode 0700.
public actor SignalKTokenStore {
    /// The file holding the record.
    public nonisolated let fileURL: URL
    private var record: SignalKTokenRecord?
    private let now: @Sendable () -> Date

    /// A store for server `host` (for example `192.168.1.10:3000`) in `directory`: the file is
    /// `signalk-<host>.json`, with characters other than letters, digits, `.` and `-` turned into `_`.
    public init(directory: URL, host: String, now: @escaping @Sendable () -> Date = { Date() }) {
        let safe = String(host.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" })
        fileURL = directory.appendingPathComponent("signalk-\(safe).json")
        self.now = now
    }

    /// The file name a server URL's `host:port` maps to in ``init(directory:host:now:)``.
    public static func hostKey(for url: URL) -> String {
        (url.host ?? "unknown") + (url.port.map { ":\($0)" } ?? "")
    }

    /// The stored record, creating (and saving) one with a fresh clientId on first use.
    public func load() throws -> SignalKTokenRecord {
        if let record { return record }
        if let data = try? Data(contentsOf: fileURL),
           let r = try? JSONDecoder.skTokens.decode(SignalKTokenRecord.self, from: data) {
            record = r
            return r
        }
        let r = SignalKTokenRecord()
        try save(r)
        return r
    }

    /// The persistent clientId.
    public func clientId() throws -> String { try load().clientId }

    /// The token, or `nil` when there is none or it has expired.
    public func token() -> String? {
        guard let r = try? load(), let t = r.token else { return nil }
        if let e = r.expires, e <= now() { return nil }
        return t
    }

    /// Stores a token (clearing the pending href and the DENIED flag); the expiry is read from the
    /// JWT `exp` unless `expires` is given. `nil` deletes the token.
    public func setToken(_ token: String?, expires: Date? = nil) throws {
        var r = try load()
        r.token = token
        r.expires = token == nil ? nil : (expires ?? Self.jwtExpiry(token!))
        if token != nil { r.pendingHref = nil; r.denied = false }
        try save(r)
    }

    /// Records (or clears) a pending access request's href.
    public func setPendingHref(_ href: String?) throws {
        var r = try load()
        r.pendingHref = href
        try save(r)
    }

    /// Sets or clears the DENIED flag.
    public func setDenied(_ denied: Bool) throws {
        var r = try load()
        r.denied = denied
        if denied { r.pendingHref = nil; r.token = nil; r.expires = nil }
        try save(r)
    }

    /// Writes the record with mode 0600 (atomic rename).
    public func save(_ r: SignalKTokenRecord) throws {
        let dir = fileURL.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let data = try JSONEncoder.skTokens.encode(r)
        let tmp = dir.appendingPathComponent(".\(fileURL.lastPathComponent).\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: tmp.path, contents: data, attributes: [.posixPermissions: 0o600])
        else { throw SignalKClientError.invalidURL("cannot write \(tmp.path)") }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: tmp.path)
        guard rename(tmp.path, fileURL.path) == 0 else {
            try? FileManager.default.removeItem(at: tmp)
            throw SignalKClientError.invalidURL("cannot rename onto \(fileURL.path)")
        }
        record = r
    }

    /// The `exp` claim of a JWT (payload decoded as base64url, no signature check), if present.
    public static func jwtExpiry(_ token: String) -> Date? {
        let parts = token.split(separator: ".")
        guard parts.count >= 2 else { return nil }
        var b64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        guard let data = Data(base64Encoded: b64), let json = try? SignalKJSON.parse(data),
              let exp = json["exp"]?.doubleValue else { return nil }
        return Date(timeIntervalSince1970: exp)
    }
}

extension JSONEncoder {
    static var skTokens: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        e.dateEncodingStrategy = .secondsSince1970
        return e
    }
}

extension JSONDecoder {
    static var skTokens: JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .secondsSince1970
        return d
    }
}
