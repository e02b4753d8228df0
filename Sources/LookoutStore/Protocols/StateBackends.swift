import Foundation
import LookoutConfig
import LookoutWire

/// Opens the configured state database: the SQLite file (`StateStore`) without `[state] url`,
/// PostgreSQL (`PostgresStateStore`) with it. One store per database per process, shared by
/// every runtime in it.
///
/// ```swift
/// let store = try StateBackends.shared(config: config, paths: paths)
/// try await store.setValue(Array("1".utf8), script: "a.lua", key: "n", quota: nil)
/// ```
public enum StateBackends {
    private static let postgresStores = Locked<[String: PostgresStateStore]>([:])
    private static let configured = Locked<[String: HostConfig.StateDatabase]>([:])

    /// The process's store for the host at `paths`, as its config file's `[state]` says (read
    /// once per process: the state database does not move while Lookout runs). What every part
    /// of Lookout that keeps state calls.
    /// - Throws: `StateStoreError` naming the config file for a `[state]` section that cannot
    ///   be used, or the SQLite file when it cannot be opened.
    public static func shared(paths: LookoutPaths) throws(StateStoreError) -> any StateBackend {
        let key = paths.configFile + "\n" + paths.stateDirectory
        let database: HostConfig.StateDatabase
        if let known = configured.withLock({ $0[key] }) {
            database = known
        } else {
            do {
                database = try HostConfig.load(paths: paths).stateDatabase()
            } catch {
                throw StateStoreError(file: paths.configFile, message: error.description)
            }
            configured.withLock { $0[key] = database }
        }
        return try shared(database, paths: paths)
    }

    /// The process's store for `database`.
    /// - Throws: `StateStoreError` when the SQLite file cannot be opened. A PostgreSQL store is
    ///   made without contacting the server: an unreachable database shows in its first call.
    public static func shared(_ database: HostConfig.StateDatabase, paths: LookoutPaths) throws(StateStoreError) -> any StateBackend {
        switch database {
        case .sqlite:
            return try StateStore.shared(paths: paths)
        case .postgres(let location, let password):
            return postgresStores.withLock { stores in
                if let store = stores[location.description] { return store }
                let store = PostgresStateStore(location: location, password: password?.value)
                stores[location.description] = store
                return store
            }
        }
    }

    /// The process's store as `config` says (`[state]`).
    /// - Throws: `StateStoreError` for a `[state]` section that cannot be used (its message
    ///   names the key) or a SQLite file that cannot be opened.
    public static func shared(config: HostConfig, paths: LookoutPaths) throws(StateStoreError) -> any StateBackend {
        let database: HostConfig.StateDatabase
        do {
            database = try config.stateDatabase()
        } catch {
            throw StateStoreError(file: config.fileName, message: error.description)
        }
        return try shared(database, paths: paths)
    }
}
