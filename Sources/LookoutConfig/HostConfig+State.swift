import Foundation

/// `[state]`: where the state database is. Without `url` it is the SQLite file in the state
/// directory, as always; with it, a PostgreSQL database several machines can share:
///
/// ```toml
/// [state]
/// url = "postgresql://lookout@db.example.org:5432/lookout"
/// password_env = "LOOKOUT_DB_PASSWORD"   # or password_file = "~/.config/lookout/db-password"
/// tls = "require"                        # disable | prefer | require (default: prefer on loopback, else require)
/// ```
extension HostConfig {
    /// Where the state database is: the SQLite file, or a PostgreSQL database with its password.
    public enum StateDatabase: Sendable, Equatable {
        /// `<state>/lookout.sqlite3` (no `[state] url`).
        case sqlite
        /// PostgreSQL at `location`, with the password from `password_env`/`password_file`
        /// (nil: none configured, e.g. a server that trusts loopback or uses peer authentication).
        case postgres(PostgresLocation, password: Secret?)
    }

    /// The configured state database.
    /// - Throws: `ConfigError` at the key's line: a URL that is not
    ///   `postgresql://USER@HOST:PORT/DATABASE` (or carries a password), `password_…` or `tls`
    ///   without a `url`, a password variable that is unset or a file that cannot be read (never
    ///   the password itself).
    public func stateDatabase(environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ConfigError) -> StateDatabase
    {
        guard let section = table.value(atPath: ["state"])?.tableValue else { return .sqlite }
        guard let urlEntry = section.entry("url") else {
            if let stray = ["password_env", "password_file", "tls"].compactMap({ section.entry($0) }).first {
                throw ConfigError(file: fileName, line: stray.line, keyPath: "state.\(stray.key)",
                                  message: "\(stray.key) needs a url (postgresql://USER@HOST:PORT/DATABASE)")
            }
            return .sqlite
        }
        let tls = section.entry("tls")?.value.stringValue.flatMap { PostgresLocation.TLS(rawValue: $0.lowercased()) }
        let location: PostgresLocation
        do {
            location = try PostgresLocation.parse(urlEntry.value.stringValue ?? "", tls: tls)
        } catch {
            throw ConfigError(file: fileName, line: urlEntry.line, keyPath: "state.url", message: error.description)
        }
        let password = try secret(section: ["state"], name: "password", environment: environment)
        return .postgres(location, password: password)
    }
}

extension HostConfigSchema {
    /// The keys of `[state]`.
    static let stateKeys: [HostConfigKeySpec] = [
        HostConfigKeySpec(name: "url", validate: checkStateURL),
        HostConfigKeySpec(name: "password_env", validate: checkNonEmptyString),
        HostConfigKeySpec(name: "password_file", validate: checkNonEmptyString),
        HostConfigKeySpec(name: "tls", validate: checkTLSMode),
        HostConfigKeySpec(name: "max_size", validate: checkOptionalSize),
        HostConfigKeySpec(name: "min_free", validate: checkOptionalSize),
    ]

    /// A PostgreSQL URL without password (the message never repeats the value: it could hold one).
    static func checkStateURL(_ value: TOMLValue) -> String? {
        guard let text = value.stringValue else {
            return "expected a URL postgresql://USER@HOST:PORT/DATABASE, got \(value.kindDescription)"
        }
        do {
            _ = try PostgresLocation.parse(text)
            return nil
        } catch {
            return error.description
        }
    }

    static func checkNonEmptyString(_ value: TOMLValue) -> String? {
        guard let text = value.stringValue, !text.isEmpty else { return "expected a non-empty string, got \(shown(value))" }
        return nil
    }

    static func checkTLSMode(_ value: TOMLValue) -> String? {
        let names = PostgresLocation.TLS.allCases.map(\.rawValue)
        guard let text = value.stringValue, PostgresLocation.TLS(rawValue: text.lowercased()) != nil else {
            return "expected one of \(names.joined(separator: ", ")), got \(shown(value))"
        }
        return nil
    }
}
