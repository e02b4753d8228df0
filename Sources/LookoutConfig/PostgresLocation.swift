import Foundation

/// Where a PostgreSQL state database is: `[state] url = "postgresql://USER@HOST:PORT/DB"` with
/// `tls`. The password never appears here (it comes from `password_env` or `password_file`), so
/// `description` is safe to print.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    /// How the connection is encrypted.
    public enum TLS: String, Sendable, CaseIterable {
        /// Never (a unix socket or a trusted loopback).
        case disable
        /// When the server offers it (the default for loopback hosts).
        case prefer
        /// Always, with the server's certificate verified (the default for any other host).
        case require
    }

    /// The login role.
    public var user: String
    /// The server's host name or address.
    public var host: String
    /// The TCP port (5432 when the URL names none).
    public var port: Int
    /// The database.
    public var database: String
    /// The TLS mode.
    public var tls: TLS

    /// Makes a location from its parts.
    public init(user: String, host: String, port: Int = 5432, database: String, tls: TLS? = nil) {
        self.user = user
        self.host = host
        self.port = port
        self.database = database
        self.tls = tls ?? (Self.isLoopback(host) ? .prefer : .require)
    }

    /// `postgresql://USER@HOST:PORT/DB` (never a password).
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "postgresql://\(user)@\(shownHost):\(port)/\(database)"
    }

    /// Whether `host` is this machine.
    public static func isLoopback(_ host: String) -> Bool {
        ["localhost", "127.0.0.1", "::1"].contains(host.lowercased()) || host.hasPrefix("127.")
    }

    /// Parses `postgresql://USER@HOST[:PORT]/DATABASE` (or `postgres://`).
    /// - Throws: a message saying what is wrong (no password in the URL: it would end up in
    ///   files, listings and logs; a missing user, host or database; a bad port).
    public static func parse(_ text: String, tls: TLS? = nil) throws(LocationError) -> PostgresLocation {
        let lowered = text.lowercased()
        guard lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") else {
            throw LocationError("expected postgresql://USER@HOST:PORT/DATABASE, got a URL with another scheme")
        }
        guard let components = URLComponents(string: text) else {
            throw LocationError("not a valid URL; expected postgresql://USER@HOST:PORT/DATABASE")
        }
        guard components.password == nil else {
            throw LocationError("the URL must not carry a password: give it with password_env or password_file")
        }
        guard let user = components.user?.removingPercentEncoding, !user.isEmpty else {
            throw LocationError("the URL names no user: postgresql://USER@HOST:PORT/DATABASE")
        }
        guard let host = components.host, !host.isEmpty else {
            throw LocationError("the URL names no host: postgresql://USER@HOST:PORT/DATABASE")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw LocationError("the URL names no database: postgresql://USER@HOST:PORT/DATABASE")
        }
        guard components.query == nil, components.fragment == nil else {
            throw LocationError("the URL must have no query or fragment; set TLS with [state] tls")
        }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw LocationError("port \(port) is out of range 1-65535") }
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return PostgresLocation(user: user, host: bareHost, port: port, database: database, tls: tls)
    }

    /// Why a URL is not a usable location.
    public struct LocationError: Error, Sendable, CustomStringConvertible {
        /// What is wrong.
        public var description: String
        init(_ description: String) { self.description = description }
    }
}
