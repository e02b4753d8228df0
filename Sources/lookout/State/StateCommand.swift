import ArgumentParser
import Foundation
import LookoutConfig
import LookoutStore

/// `lookout state [info|migrate --to URL]`: where the state database is, and moving it from the
/// SQLite file to PostgreSQL.
struct StateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Show where the state database is; copy the SQLite state into PostgreSQL.",
        subcommands: [Info.self, Migrate.self],
        defaultSubcommand: Info.self)

    /// `lookout state info`: the database and its applied migrations.
    struct Info: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "info", abstract: "Show the state database and its schema version.")

        func run() async throws {
            let environment = try HostEnvironment.load()
            let store: any StateBackend
            do { store = try StateBackends.shared(config: environment.config, paths: environment.paths) } catch {
                throw HostSetupError(description: error.description)
            }
            let applied = try await store.appliedMigrations()
            print("state database: \(store.location)")
            print("schema: \(applied.last ?? "none") (\(applied.count) migrations applied)")
        }
    }

    /// `lookout state migrate --to postgresql://USER@HOST:PORT/DB`.
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "migrate",
            abstract: "Copy the SQLite state (store, outbox, notify queue, audit, alerts, mirror) into an empty PostgreSQL database.",
            discussion: """
                The copy runs in one PostgreSQL transaction and is committed only when every table has as many rows
                as in the SQLite file. The SQLite file is left as it is. Stop every Lookout process using it first;
                then set [state] url in config.toml to the new database.
                """)

        @Option(help: "The target database: postgresql://USER@HOST:PORT/DATABASE (no password in it).")
        var to: String

        @Option(help: "The environment variable holding the password (default: [state] password_env/_file when the URL is the configured one).")
        var passwordEnv: String?

        @Option(help: "A file holding the password.")
        var passwordFile: String?

        @Option(help: "TLS: disable, prefer or require (default: prefer on loopback, else require).")
        var tls: String?

        func run() async throws {
            let environment = try HostEnvironment.load()
            let mode: PostgresLocation.TLS?
            if let tls {
                guard let parsed = PostgresLocation.TLS(rawValue: tls.lowercased()) else {
                    throw ValidationError("--tls must be disable, prefer or require")
                }
                mode = parsed
            } else {
                mode = nil
            }
            let location: PostgresLocation
            do { location = try PostgresLocation.parse(to, tls: mode) } catch { throw ValidationError("--to: \(error.description)") }
            let password = try password(for: location, config: environment.config)
            let source: StateStore
            do { source = try StateStore.shared(paths: environment.paths) } catch { throw HostSetupError(description: error.description) }
            let target: PostgresStateStore
            do { target = try await PostgresStateStore.open(location: location, password: password) } catch {
                throw HostSetupError(description: error.description)
            }
            defer { target.close() }
            let counts: [StateCopy.TableCount]
            do { counts = try await StateCopy.copy(from: source, to: target) } catch {
                throw HostSetupError(description: "\(error)")
            }
            print("copied \(environment.paths.databaseFile) to \(location):")
            for count in counts { print("  \(count.table.padding(toLength: 14, withPad: " ", startingAt: 0)) \(count.target) rows (verified)") }
            print("next: set [state] url = \"\(location)\" in \(environment.paths.configFile)")
        }

        private func password(for location: PostgresLocation, config: HostConfig) throws -> String? {
            if let passwordEnv {
                guard let value = ProcessInfo.processInfo.environment[passwordEnv], !value.isEmpty else {
                    throw ValidationError("environment variable \(passwordEnv) is not set or empty")
                }
                return value
            }
            if let passwordFile {
                guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                    throw ValidationError("cannot read the password file \(passwordFile)")
                }
                return text.hasSuffix("\n") ? String(text.dropLast()) : text
            }
            if case .postgres(let configured, let secret)? = try? config.stateDatabase(), configured.description == location.description {
                return secret?.value
            }
            return nil
        }
    }
}
