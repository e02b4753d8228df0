import Foundation
import LookoutConfig
import LookoutWire
import Logging
import NIOSSL
import PostgresNIO

/// The state database on PostgreSQL (`[state] url = "postgresql://…"`): the same tables and
/// behaviour as the SQLite `StateStore`, shared by every Lookout process and machine that uses
/// the database. Built on postgres-nio's `PostgresClient` (a connection pool that reconnects with
/// backoff by itself).
///
/// Every call is bounded by `operationTimeout`: while the database is unreachable, calls throw a
/// retryable `StateStoreError` (scripts see `nil, err`; the remote-command guard refuses, since
/// it cannot record), and they work again once it is back, with nothing queued lost.
///
/// ```swift
/// let store = try await PostgresStateStore.open(location: location, password: secret?.value)
/// try await store.setValue(Array("42".utf8), script: "alerts.lua", key: "count", quota: nil)
/// ```
public final class PostgresStateStore: Sendable {
    /// Where the database is, for messages (never the password).
    public let location: String
    /// The same as `location`: one database, one identity across processes.
    public var identity: String { location }
    let client: PostgresClient
    private let runner: Task<Void, Never>
    let logger: Logger

    /// How long one store call may take by default, waiting for a connection included, before it fails.
    public static let operationTimeout: Duration = .seconds(5)
    /// How long one store call of this store may take.
    public let timeout: Duration

    private let preparation = Locked<Task<Void, any Error>?>(nil)
    /// The database's size and when it was read (`requireRoom()`).
    let sizeReading = Locked<(size: Int, at: Date)?>(nil)
    private let password: String?
    private let target: PostgresLocation

    /// A store for the database at `location`. Nothing is sent yet: the first call connects
    /// once directly (so that a wrong address, password or database is reported as the server
    /// said it) and applies the migrations; a call that finds the database unreachable fails,
    /// and the next one tries again.
    public init(location: PostgresLocation, password: String?, timeout: Duration = operationTimeout) {
        self.location = location.description
        self.timeout = timeout
        target = location
        self.password = password
        let logger = Logger(label: "lookout.state.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
        self.logger = logger
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.user, password: password,
            database: location.database, tls: location.tls.clientTLS)
        configuration.options.connectTimeout = timeout
        configuration.options.maximumConnections = 20
        configuration.options.connectionIdleTimeout = .seconds(60)
        configuration.options.additionalStartupParameters = Self.sessionLimits(timeout)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        runner = Task.detached { await client.run() }
    }

    /// A store for the database at `location`, connected and migrated.
    /// - Throws: `StateStoreError` naming the database (never the password) when it cannot be
    ///   reached, the login is refused, or a migration fails.
    public static func open(
        location: PostgresLocation, password: String?, timeout: Duration = operationTimeout
    ) async throws(StateStoreError) -> PostgresStateStore {
        let store = PostgresStateStore(location: location, password: password, timeout: timeout)
        do {
            try await store.prepared()
        } catch {
            store.close()
            throw error
        }
        return store
    }

    deinit { runner.cancel() }

    /// Stops the connection pool (the store cannot be used afterwards).
    public func close() { runner.cancel() }

    /// Waits for the first connection and the migrations (once; again after a failure).
    func prepared() async throws(StateStoreError) {
        let task = preparation.withLock { current -> Task<Void, any Error> in
            if let current { return current }
            let task = Task { [self] in
                try await Self.probe(target, password: password, timeout: timeout, logger: logger)
                try await migrate()
                _ = try? await usage()
            }
            current = task
            return task
        }
        do {
            try await task.value
        } catch {
            preparation.withLock { if $0 == task { $0 = nil } }
            throw storeError(error)
        }
    }

    /// One direct connection before the pool is used, so that a wrong address, password or
    /// database name is reported as the server said it (the pool would only retry).
    private static func probe(
        _ location: PostgresLocation, password: String?, timeout: Duration, logger: Logger
    ) async throws(StateStoreError) {
        do {
            let tls: PostgresConnection.Configuration.TLS
            switch location.tls {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            var configuration = PostgresConnection.Configuration(
                host: location.host, port: location.port, username: location.user, password: password,
                database: location.database, tls: tls)
            configuration.options.connectTimeout = .seconds(max(1, timeout.components.seconds))
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            try? await connection.close()
        } catch {
            throw storeError(error, location: location.description)
        }
    }

    // MARK: Running statements

    /// The server-side limits of every session, the same as the client's `timeout`: a statement
    /// or a wait for a lock ends there, and so does a session left idle inside a transaction (a
    /// client paused or cut off mid-transaction releases its row locks, so that it cannot hold up
    /// the other instances of a cluster, e.g. one taking over its leases).
    static func sessionLimits(_ timeout: Duration) -> [(String, String)] {
        let milliseconds = String(max(1, timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        return ["statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"].map { ($0, milliseconds) }
    }

    /// Runs `body` on a pooled connection, bounded by `timeout`: when it runs out the call
    /// returns, and the connection in use is closed (a query does not end on cancellation
    /// alone, and a connection being closed may never answer a last ROLLBACK), so nothing the
    /// server or the connection does can hold the caller past its timeout.
    @discardableResult
    func withConnection<T: Sendable>(
        prepare: Bool = true, timeout: Duration? = nil,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(StateStoreError) -> T {
        if prepare { try await prepared() }
        let timeout = timeout ?? self.timeout
        let inUse = Locked<PostgresConnection?>(nil)
        let work = Task { [client] in
            try await client.withConnection { connection in
                inUse.withLock { $0 = connection }
                defer { inUse.withLock { $0 = nil } }
                return try await body(connection)
            }
        }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                    let answered = Locked(false)
                    let timer = Task {
                        try? await Task.sleep(for: timeout)
                        guard answered.claimOnce() else { return }
                        work.cancel()
                        if let connection = inUse.withLock({ $0 }) { _ = connection.close() as EventLoopFuture<Void> }
                        continuation.resume(throwing: PostgresTimeout())
                    }
                    Task {
                        let result = await work.result
                        guard answered.claimOnce() else { return }
                        timer.cancel()
                        continuation.resume(with: result)
                    }
                }
            } onCancel: {
                work.cancel()
            }
        } catch {
            throw storeError(error)
        }
    }

    /// Runs `body` in one transaction (`BEGIN` … `COMMIT`; rolled back when it throws, and the
    /// error it threw is the one reported).
    @discardableResult
    func transaction<T: Sendable>(
        prepare: Bool = true, timeout: Duration? = nil,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(StateStoreError) -> T {
        let longer = timeout.map { $0 > self.timeout } ?? false
        return try await withConnection(prepare: prepare, timeout: timeout) { [logger] connection in
            try await connection.query("BEGIN", logger: logger)
            if longer, let timeout {
                // The session's limits are the store's timeout; this transaction may take longer.
                for (name, value) in Self.sessionLimits(timeout) {
                    try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL \(name) = \(value)"), logger: logger)
                }
            }
            do {
                let result = try await body(connection)
                try await connection.query("COMMIT", logger: logger)
                return result
            } catch {
                if !connection.isClosed { _ = try? await connection.query("ROLLBACK", logger: logger) }
                throw error
            }
        }
    }

    /// The rows of a query, each addressable by column name.
    func rows(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> [PostgresRandomAccessRow] {
        var rows: [PostgresRandomAccessRow] = []
        for try await row in try await connection.query(query, logger: logger) { rows.append(row.makeRandomAccess()) }
        return rows
    }

    /// Runs a statement; returns how many rows it returned (give a changing statement
    /// `RETURNING 1` to count the rows it changed).
    @discardableResult
    func execute(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> Int {
        var count = 0
        for try await _ in try await connection.query(query, logger: logger) { count += 1 }
        return count
    }

    /// An error of a call, in plain words naming the database: the server's message (never a
    /// password: the URL carries none) and whether trying again may help.
    func storeError(_ error: any Error) -> StateStoreError { Self.storeError(error, location: location) }

    static func storeError(_ error: any Error, location: String) -> StateStoreError {
        if let error = error as? StateStoreError { return error }
        if error is StoreQuotaExceeded || error is OutboxQuotaExceeded || error is CancellationError || error is LeaseLost {
            return StateStoreError(file: location, underlying: error)
        }
        if error is PostgresTimeout {
            return StateStoreError(
                file: location, message: "the database did not answer in time (unreachable or overloaded)",
                retryable: true)
        }
        if let error = error as? PSQLError {
            if let info = error.serverInfo, let message = info[.message] {
                let state = info[.sqlState] ?? ""
                // Class 08 (connection), 40 (serialization, deadlock), 53 (resources), 57 (shutdown,
                // statement timeout), and a lock not granted in time (55P03).
                let retryable = ["08", "40", "53", "57"].contains(String(state.prefix(2))) || state == "55P03"
                return StateStoreError(file: location, message: "\(message) (SQLSTATE \(state))", retryable: retryable)
            }
            let cause = error.underlying.map { ": \($0)" } ?? ""
            return StateStoreError(file: location, message: "cannot reach the database (\(error.code)\(cause))", retryable: true)
        }
        return StateStoreError(file: location, message: String(describing: error), retryable: false)
    }
}

extension PostgresStateStore: StateBackend {}

extension Locked<Bool> {
    /// Sets the flag; true only for the first caller (one answer of several racing ones).
    func claimOnce() -> Bool { withLock { done in defer { done = true }; return !done } }
}

/// A store call that ran out of time.
struct PostgresTimeout: Error {}

extension PostgresLocation.TLS {
    /// The client's TLS setting: `disable`, `prefer` or `require` (certificates verified).
    var clientTLS: PostgresClient.Configuration.TLS {
        switch self {
        case .disable: return .disable
        case .prefer: return .prefer(.makeClientConfiguration())
        case .require: return .require(.makeClientConfiguration())
        }
    }
}
