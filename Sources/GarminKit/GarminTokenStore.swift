import Foundation

/// The OAuth1 and OAuth2 tokens of one account.
public struct GarminTokens: Sendable, Equatable {
    /// The long-lived token (nil: not logged in).
    public var oauth1: OAuth1Token?
    /// The short-lived token (nil: an exchange is needed).
    public var oauth2: OAuth2Token?
    /// Creates a pair.
    public init(oauth1: OAuth1Token?, oauth2: OAuth2Token?) { self.oauth1 = oauth1; self.oauth2 = oauth2 }
}

/// garth's token directory (`oauth1_token.json`, `oauth2_token.json`) and `dumps` string
/// (spec §10). Files are written atomically with mode 0600 in a 0700 directory.
public enum GarminTokenStore {
    /// `oauth1_token.json`.
    public static let oauth1File = "oauth1_token.json"
    /// `oauth2_token.json`.
    public static let oauth2File = "oauth2_token.json"

    /// Reads the tokens in `directory`; a missing file gives nil for that token.
    public static func load(from directory: URL) throws -> GarminTokens {
        func read<T: Decodable>(_ name: String, _ type: T.Type) throws -> T? {
            let url = directory.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: url.path) else { return nil }
            let data: Data
            do { data = try Data(contentsOf: url) } catch {
                throw GarminError.tokenStore("cannot read \(name)")
            }
            do { return try JSONDecoder().decode(T.self, from: data) } catch {
                throw GarminError.tokenStore("\(name) is not a valid token file (\(decodingReason(error)))")
            }
        }
        return GarminTokens(oauth1: try read(oauth1File, OAuth1Token.self), oauth2: try read(oauth2File, OAuth2Token.self))
    }

    /// Writes both tokens (a nil token removes its file).
    public static func dump(_ tokens: GarminTokens, to directory: URL) throws {
        try writeOAuth1(tokens.oauth1, to: directory)
        try writeOAuth2(tokens.oauth2, to: directory)
    }

    /// Writes (or with nil removes) `oauth1_token.json`.
    public static func writeOAuth1(_ token: OAuth1Token?, to directory: URL) throws {
        try write(token.map { PythonJSONWriter.object($0.pythonPairs, indent: 4) }, name: oauth1File, in: directory)
    }

    /// Writes (or with nil removes) `oauth2_token.json` (after a refresh only this file changes).
    public static func writeOAuth2(_ token: OAuth2Token?, to directory: URL) throws {
        try write(token.map { PythonJSONWriter.object($0.pythonPairs, indent: 4) }, name: oauth2File, in: directory)
    }

    /// Removes both token files (the directory stays).
    public static func remove(from directory: URL) throws {
        try write(nil, name: oauth1File, in: directory)
        try write(nil, name: oauth2File, in: directory)
    }

    /// garth `dumps()`: Base64 of the single-line JSON array `[oauth1, oauth2]`.
    public static func dumps(_ tokens: GarminTokens) -> String {
        let one = tokens.oauth1.map { PythonJSONWriter.object($0.pythonPairs, indent: nil) } ?? "null"
        let two = tokens.oauth2.map { PythonJSONWriter.object($0.pythonPairs, indent: nil) } ?? "null"
        return Data("[\(one), \(two)]".utf8).base64EncodedString()
    }

    /// garth `loads(s)`.
    public static func loads(_ string: String) throws -> GarminTokens {
        guard let data = Data(base64Encoded: string.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw GarminError.tokenStore("token string is not Base64")
        }
        struct Pair: Decodable {
            var oauth1: OAuth1Token?
            var oauth2: OAuth2Token?
            init(from decoder: any Decoder) throws {
                var c = try decoder.unkeyedContainer()
                oauth1 = try c.decode(OAuth1Token?.self)
                oauth2 = c.isAtEnd ? nil : try c.decode(OAuth2Token?.self)
            }
        }
        do {
            let p = try JSONDecoder().decode(Pair.self, from: data)
            return GarminTokens(oauth1: p.oauth1, oauth2: p.oauth2)
        } catch {
            throw GarminError.tokenStore("token string is not a [oauth1, oauth2] pair (\(decodingReason(error)))")
        }
    }

    /// Where tokens come from according to `GARTH_HOME` / `GARTH_TOKEN` (both set is an error).
    public static func fromEnvironment(_ env: [String: String] = ProcessInfo.processInfo.environment) throws
        -> (directory: URL?, tokens: GarminTokens?)
    {
        let home = env["GARTH_HOME"].flatMap { $0.isEmpty ? nil : $0 }
        let token = env["GARTH_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        if home != nil && token != nil {
            throw GarminError.invalidConfiguration("GARTH_HOME and GARTH_TOKEN cannot both be set")
        }
        if let token { return (nil, try loads(token)) }
        guard let home else { return (nil, nil) }
        let dir = URL(fileURLWithPath: (home as NSString).expandingTildeInPath, isDirectory: true)
        let exists = FileManager.default.fileExists(atPath: dir.appendingPathComponent(oauth1File).path)
        return (dir, exists ? try load(from: dir) : nil)
    }

    /// Creates `directory` (0700) if needed and tightens an existing one to 0700.
    static func ensureDirectory(_ directory: URL) throws {
        let fm = FileManager.default
        do {
            if !fm.fileExists(atPath: directory.path) {
                try fm.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            try fm.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        } catch {
            throw GarminError.tokenStore("cannot create token directory \(directory.lastPathComponent)")
        }
    }

    private static func write(_ text: String?, name: String, in directory: URL) throws {
        let fm = FileManager.default
        let url = directory.appendingPathComponent(name)
        guard let text else {
            if fm.fileExists(atPath: url.path) {
                do { try fm.removeItem(at: url) } catch { throw GarminError.tokenStore("cannot remove \(name)") }
            }
            return
        }
        try ensureDirectory(directory)
        let tmp = directory.appendingPathComponent(".\(name).\(UUID().uuidString).tmp")
        guard fm.createFile(atPath: tmp.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw GarminError.tokenStore("cannot write \(name)")
        }
        if rename(tmp.path, url.path) != 0 {
            try? fm.removeItem(at: tmp)
            throw GarminError.tokenStore("cannot replace \(name)")
        }
    }

    private static func decodingReason(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let k, _): return "missing \(k.stringValue)"
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c):
            return "wrong type at \(c.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.dataCorrupted(let c):
            return c.codingPath.isEmpty ? "malformed JSON" : c.debugDescription
        default: return "unreadable"
        }
    }
}
