import Crypto
import Foundation
import LookoutConfig

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The web view's sign-ins (`<state>/web-sessions.json`, mode 0600): one-time login codes that
/// `lookout web login` makes and sessions the status server opens with them. The file holds only
/// SHA-256 digests of codes and session tokens (a copy of it signs nobody in); each session's CSRF
/// token is kept as is, it is useless without the session cookie. Every change happens under an
/// exclusive `flock` of `<state>/web-sessions.lock`, so the CLI and `serve` never lose each other's
/// writes.
///
/// ```swift
/// let sessions = WebSessions(stateDirectory: paths.stateDirectory)
/// let code = try sessions.makeLoginCode()           // lookout web login
/// let opened = try sessions.redeem(code: code)       // GET /web/login?code=…
/// let session = try sessions.session(token: opened!.token)
/// ```
public struct WebSessions: Sendable {
    /// How long a login code works: 10 minutes.
    public static let codeLifetime: TimeInterval = 600
    /// How long a session lasts: 12 hours.
    public static let sessionLifetime: TimeInterval = 12 * 3600
    /// The session cookie's name.
    public static let cookieName = "lookout_session"

    /// An open session.
    public struct Session: Sendable, Equatable {
        /// The CSRF token every form of this session carries.
        public var csrf: String
        /// When it ends.
        public var expires: Date
    }

    /// A freshly opened session: the token for the cookie (never stored) and the session.
    public struct Opened: Sendable {
        /// The cookie's value.
        public var token: String
        /// The session.
        public var session: Session
    }

    struct Record: Codable {
        var hash: String
        var expires: Double
        var csrf: String?
    }

    struct File: Codable {
        var codes: [Record] = []
        var sessions: [Record] = []
    }

    /// The sessions file.
    public let file: String
    private let lockFile: String

    /// The sign-ins of a state directory.
    public init(stateDirectory: String) {
        file = stateDirectory + "/web-sessions.json"
        lockFile = stateDirectory + "/web-sessions.lock"
    }

    /// Makes a one-time login code valid for `lifetime` seconds from `now`.
    public func makeLoginCode(now: Date = Date(), lifetime: TimeInterval = codeLifetime) throws -> String {
        let code = Self.randomToken()
        try change(now: now) { $0.codes.append(Record(hash: Self.digest(code), expires: now.timeIntervalSince1970 + lifetime)) }
        return code
    }

    /// Uses up a login code and opens a session; nil when the code is unknown, used or expired.
    public func redeem(code: String, now: Date = Date()) throws -> Opened? {
        let hash = Self.digest(code)
        let token = Self.randomToken(), csrf = Self.randomToken()
        let expires = now.addingTimeInterval(Self.sessionLifetime)
        var opened: Opened?
        try change(now: now) { state in
            guard let index = state.codes.firstIndex(where: { $0.hash == hash }) else { return }
            state.codes.remove(at: index)
            state.sessions.append(Record(hash: Self.digest(token), expires: expires.timeIntervalSince1970, csrf: csrf))
            opened = Opened(token: token, session: Session(csrf: csrf, expires: expires))
        }
        return opened
    }

    /// The live session of a cookie's token, if any.
    public func session(token: String, now: Date = Date()) -> Session? {
        guard !token.isEmpty, let state = try? read() else { return nil }
        let hash = Self.digest(token)
        guard let record = state.sessions.first(where: { $0.hash == hash }), record.expires > now.timeIntervalSince1970,
              let csrf = record.csrf
        else { return nil }
        return Session(csrf: csrf, expires: Date(timeIntervalSince1970: record.expires))
    }

    /// Ends the session of `token` (signing out).
    public func revoke(token: String) throws {
        let hash = Self.digest(token)
        try change(now: Date()) { $0.sessions.removeAll { $0.hash == hash } }
    }

    /// Ends every session and forgets every unused code; returns how many sessions ended.
    @discardableResult
    public func revokeAll(now: Date = Date()) throws -> Int {
        var count = 0
        try change(now: now) { state in
            count = state.sessions.count
            state = File()
        }
        return count
    }

    /// How many sessions are live.
    public func liveSessions(now: Date = Date()) -> Int {
        ((try? read())?.sessions ?? []).filter { $0.expires > now.timeIntervalSince1970 }.count
    }

    // MARK: storage

    private func read() throws -> File {
        guard let data = FileManager.default.contents(atPath: file), !data.isEmpty else { return File() }
        return try JSONDecoder().decode(File.self, from: data)
    }

    /// Reads, changes and writes the file under the lock, dropping expired codes and sessions.
    private func change(now: Date, _ body: (inout File) -> Void) throws {
        let directory = (file as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fd = open(lockFile, O_RDWR | O_CREAT | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw WebSessionsError(description: "cannot open \(lockFile): errno \(errno)") }
        defer { close(fd) }
        guard flock(fd, LOCK_EX) == 0 else { throw WebSessionsError(description: "cannot lock \(lockFile): errno \(errno)") }
        defer { _ = flock(fd, LOCK_UN) }
        var state: File
        do { state = try read() } catch {
            throw WebSessionsError(description: "\(file) is damaged (\(error)); delete it to sign everybody out")
        }
        let cutoff = now.timeIntervalSince1970
        state.codes.removeAll { $0.expires <= cutoff }
        state.sessions.removeAll { $0.expires <= cutoff }
        body(&state)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(state)
        let temporary = file + ".tmp-\(getpid())"
        guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw WebSessionsError(description: "cannot write \(temporary)")
        }
        guard rename(temporary, file) == 0 else {
            unlink(temporary)
            throw WebSessionsError(description: "cannot replace \(file): errno \(errno)")
        }
    }

    /// 32 random bytes as base64url (43 characters).
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func digest(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether two texts are equal, in time independent of where they differ.
    public static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<x.count { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}

/// Why the sessions file cannot be used.
public struct WebSessionsError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public let description: String
}
