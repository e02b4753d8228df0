import Foundation
import LookoutWire
import GRDB
import LookoutConfig
import Lua

/// Lookout's one SQLite database (`<state>/lookout.sqlite3`): the scripts' key/value store and
/// the upload outbox (`StateStore+Outbox.swift`); sync mirrors and the audit log next, each added
/// as a named migration in `StateStore.migrations`.
///
/// A file store is a GRDB `DatabasePool` in WAL mode (many readers, one writer, other processes
/// wait up to `busyTimeout` for locks) with mode 0600; an in-memory store (tests) is a
/// `DatabaseQueue`. All access is async, so callers on the Lua thread never block on disk.
///
/// ```swift
/// let store = try StateStore.shared(paths: .resolve())
/// try await store.setValue("42", script: "alerts.lua", key: "count")
/// ```
public final class StateStore: Sendable {
    /// The database file, or nil for an in-memory store.
    public let path: String?
    /// The database, for other parts of Lookout that keep state here (use async access only
    /// from code that runs on the Lua thread).
    public let database: any DatabaseWriter

    /// Names this database in process-wide registries (outboxes, guards, locks): its file, or
    /// the in-memory instance.
    public var identity: String { path ?? "memory:\(UInt(bitPattern: ObjectIdentifier(self).hashValue))" }

    /// How long a statement waits for another process's lock before failing.
    public static let busyTimeout: TimeInterval = 5

    /// Opens (creating if needed) the database at `path` and applies the migrations. The parent
    /// directory must exist. A new file gets mode 0600; an existing one is narrowed to 0600.
    /// - Throws: `StateStoreError` naming the file when it cannot be opened (not a database,
    ///   locked by another process for longer than `busyTimeout`, unreadable…).
    public init(path: String) throws(StateStoreError) {
        self.path = path
        do {
            try StateStore.createPrivateFile(path)
            var configuration = Configuration()
            configuration.busyMode = .timeout(StateStore.busyTimeout)
            configuration.label = "lookout.state"
            database = try StateStore.whileOpening(path) {
                let pool = try DatabasePool(path: path, configuration: configuration)
                try StateStore.migrator.migrate(pool)
                return pool
            }
        } catch let error as StateStoreError {
            throw error
        } catch {
            throw StateStoreError(file: path, underlying: error)
        }
    }

    /// A new, empty in-memory store with all migrations applied (for tests).
    public init() throws(StateStoreError) {
        path = nil
        do {
            let queue = try DatabaseQueue(configuration: Configuration())
            try StateStore.migrator.migrate(queue)
            database = queue
        } catch {
            throw StateStoreError(file: ":memory:", underlying: error)
        }
    }

    // MARK: Shared stores

    private static let openStores = Locked<[String: StateStore]>([:])

    /// The process's store for `path`, opened on first use; every runtime of the process shares it.
    public static func shared(path: String) throws(StateStoreError) -> StateStore {
        do {
            return try openStores.withLock { stores in
                if let store = stores[path] { return store }
                let store = try StateStore(path: path)
                stores[path] = store
                return store
            }
        } catch let error as StateStoreError {
            throw error
        } catch {
            throw StateStoreError(file: path, underlying: error)
        }
    }

    /// The process's store at `paths.databaseFile`, creating the state directory (0700) first.
    public static func shared(paths: LookoutPaths) throws(StateStoreError) -> StateStore {
        do {
            try paths.createStateDirectory()
        } catch {
            throw StateStoreError(file: paths.databaseFile, message: "cannot create the state directory: \(error)")
        }
        return try shared(path: paths.databaseFile)
    }

    // MARK: Migrations

    /// A named schema change.
    public typealias Migration = (name: String, migrate: @Sendable (Database) throws -> Void)

    /// The schema, as named migrations applied in order: the core tables, then the sync mirror
    /// (`StateStore+Sync.swift`), then the audit log (`StateStore+Audit.swift`). Append new ones;
    /// never edit or reorder one that has shipped.
    public static let migrations: [Migration] = coreMigrations + syncMigrations + auditMigrations + alertMigrations
        + remoteKeyMigrations + auditRepeatMigrations + outboxQuotaMigrations + clusterMigrations
        + catalogueMigrations
        + alertSnoozeMigrations

    static let coreMigrations: [Migration] = [
        ("v1-kv", { db in
            // Per-script key/value store: `value` is JSON text as `json.encode` writes it.
            try db.execute(sql: """
                CREATE TABLE kv (
                    script TEXT NOT NULL,
                    key TEXT NOT NULL,
                    value TEXT NOT NULL,
                    updated_at REAL NOT NULL,
                    PRIMARY KEY (script, key)
                ) WITHOUT ROWID
                """)
        }),
        ("v2-outbox", { db in
            // The upload queue (NightscoutKit `OutboxItem`): one row per (site, identifier).
            try db.execute(sql: """
                CREATE TABLE outbox (
                    site TEXT NOT NULL,
                    identifier TEXT NOT NULL,
                    collection TEXT NOT NULL,
                    body BLOB NOT NULL,
                    source TEXT,
                    created REAL NOT NULL,
                    state TEXT NOT NULL,
                    attempts INTEGER NOT NULL,
                    next_attempt REAL NOT NULL,
                    last_error TEXT,
                    last_status INTEGER,
                    sent_at REAL,
                    deduplicated INTEGER,
                    PRIMARY KEY (site, identifier)
                ) WITHOUT ROWID;
                CREATE INDEX outbox_due ON outbox (site, state, next_attempt);
                CREATE INDEX outbox_created ON outbox (created);
                """)
        }),
    ]

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in migrations { migrator.registerMigration(migration.name, migrate: migration.migrate) }
        return migrator
    }

    /// Runs `body` (switch to WAL, apply migrations) while holding `<path>.open-lock`, so that
    /// processes opening the database at the same moment take turns. Without it they race the
    /// migrations: one applies a migration another has just applied ("table … already exists"),
    /// or SQLite answers SQLITE_BUSY at once to a process whose read snapshot another's migration
    /// made stale. Waits at most `busyTimeout` for the lock.
    private static func whileOpening<T>(_ path: String, _ body: () throws -> T) throws -> T {
        let fd = open(path + ".open-lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StateStoreError(file: path, message: "cannot open \(path).open-lock: \(String(cString: strerror(errno)).lowercased())")
        }
        defer { close(fd) } // closing releases the lock
        let deadline = Date(timeIntervalSinceNow: busyTimeout)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw StateStoreError(file: path, message: "cannot lock \(path).open-lock: \(String(cString: strerror(errno)).lowercased())")
            }
            guard Date() < deadline else {
                throw StateStoreError(file: path, message: "another process has been opening the database for more than \(Int(busyTimeout)) s", retryable: true)
            }
            usleep(5_000)
        }
        return try body()
    }

    /// Creates the file with mode 0600 if missing; narrows an existing file to 0600.
    private static func createPrivateFile(_ path: String) throws(StateStoreError) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StateStoreError(file: path, message: "cannot open: \(String(cString: strerror(errno)).lowercased())")
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & 0o077 != 0 { _ = fchmod(fd, 0o600) }
    }
}

// MARK: Key/value store

/// Values are JSON text exactly as `json.encode` wrote it. It is stored as TEXT when it is valid
/// UTF-8 (always, unless a Lua string held other bytes, which the codec keeps byte for byte);
/// otherwise as a BLOB of the same bytes, so every value reads back identical.
extension StateStore {
    /// The JSON text stored under `key` for `script`, or nil.
    public func value(script: String, key: String) async throws(StateStoreError) -> [UInt8]? {
        try await access { db in
            try Data.fetchOne(db, sql: "SELECT value FROM kv WHERE script = ? AND key = ?", arguments: [script, key])
                .map { [UInt8]($0) }
        }
    }

    /// Stores JSON text under `key` for `script`; nil deletes the key. With a `quota` (bytes of
    /// keys and values the script may keep), a write that would take the script over it, and
    /// grows what it keeps, throws an error with code `quota` and stores nothing.
    public func setValue(_ json: [UInt8]?, script: String, key: String, quota: StoreQuota? = nil) async throws(StateStoreError) {
        try await write { db in try StateStore.put(json, script: script, key: key, quota: quota, in: db) }
    }

    /// Replaces the value only if it is still `expected` (nil: the key is absent), in one
    /// transaction: the compare-and-swap under `store.update`. Returns whether it was replaced.
    public func replaceValue(
        script: String, key: String, expected: [UInt8]?, with json: [UInt8]?, quota: StoreQuota? = nil
    ) async throws(StateStoreError) -> Bool {
        try await write { db in
            let current = try Data.fetchOne(
                db, sql: "SELECT value FROM kv WHERE script = ? AND key = ?", arguments: [script, key])
            guard current.map({ [UInt8]($0) }) == expected else { return false }
            try StateStore.put(json, script: script, key: key, quota: quota, in: db)
            return true
        }
    }

    /// The keys of `script` starting with `prefix`, in byte order.
    public func keys(script: String, prefix: String = "") async throws(StateStoreError) -> [String] {
        try await access { db in
            // Keys with a prefix are contiguous in byte order from the prefix on (BINARY collation).
            let cursor = try String.fetchCursor(
                db, sql: "SELECT key FROM kv WHERE script = ? AND key >= ? ORDER BY key", arguments: [script, prefix])
            var keys: [String] = []
            let prefixBytes = Array(prefix.utf8)
            while let key = try cursor.next() {
                guard key.utf8.starts(with: prefixBytes) else { break }
                keys.append(key)
            }
            return keys
        }
    }

    /// Every key of `script` with its JSON text, in key order.
    public func entries(script: String) async throws(StateStoreError) -> [(key: String, value: [UInt8])] {
        try await access { db in
            try Row.fetchAll(db, sql: "SELECT key, value FROM kv WHERE script = ? ORDER BY key", arguments: [script])
                .map { row in (key: row["key"], value: [UInt8]((row["value"] as Data?) ?? Data())) }
        }
    }

    private static func put(_ json: [UInt8]?, script: String, key: String, quota: StoreQuota? = nil, in db: Database) throws {
        guard let json else {
            try db.execute(sql: "DELETE FROM kv WHERE script = ? AND key = ?", arguments: [script, key])
            return
        }
        if let quota {
            // In the write transaction: two writers cannot both slip under the quota.
            let others = try Int.fetchOne(db, sql: """
                SELECT COALESCE(SUM(length(CAST(key AS BLOB)) + length(CAST(value AS BLOB))), 0)
                FROM kv WHERE script = ? AND key != ?
                """, arguments: [script, key]) ?? 0
            let old = try Int.fetchOne(db, sql: """
                SELECT length(CAST(key AS BLOB)) + length(CAST(value AS BLOB)) FROM kv WHERE script = ? AND key = ?
                """, arguments: [script, key]) ?? 0
            let new = key.utf8.count + json.count
            if others + new > quota.bytes, new > old {
                throw StoreQuotaExceeded(script: script, key: key, wouldUse: others + new, quota: quota)
            }
        }
        let stored: any DatabaseValueConvertible = String(validating: json, as: UTF8.self) ?? Data(json)
        try db.execute(
            sql: """
                INSERT INTO kv (script, key, value, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (script, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
                """,
            arguments: [script, key, stored, Date().timeIntervalSince1970])
    }

    /// A read, with errors naming the file.
    func access<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StateStoreError) -> T {
        do {
            return try await database.read(body)
        } catch {
            throw StateStoreError(file: path ?? ":memory:", underlying: error)
        }
    }

    /// A write transaction, with errors naming the file.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StateStoreError) -> T {
        do {
            return try await database.write(body)
        } catch {
            throw StateStoreError(file: path ?? ":memory:", underlying: error)
        }
    }
}

// MARK: Errors

/// The state database cannot be opened, read or written. The message names the file and says
/// what to do; scripts see it as `err.code == "store"`.
public struct StateStoreError: Error, CustomStringConvertible, Sendable, LuaErrorConvertible {
    /// The database file.
    public var file: String
    /// What went wrong.
    public var message: String
    /// Whether trying again later may help (the database was busy).
    public var retryable: Bool
    /// The script's `err.code`: `store`, `quota` when a script's `store` quota refused a write,
    /// or `lease` when this instance no longer holds the script's cluster lease.
    public var code = "store"

    /// An error with a message.
    public init(file: String, message: String, retryable: Bool = false) {
        self.file = file
        self.message = message
        self.retryable = retryable
    }

    /// An error from SQLite/GRDB, in plain words.
    init(file: String, underlying error: any Error) {
        self.file = file
        if let quota = error as? OutboxQuotaExceeded {
            message = quota.description
            retryable = false
            code = "quota"
            return
        }
        if let quota = error as? StoreQuotaExceeded {
            message = quota.description
            retryable = false
            code = "quota"
            return
        }
        if let lost = error as? LeaseLost {
            message = lost.description
            retryable = false
            code = "lease"
            return
        }
        if error is CancellationError {
            message = "cancelled"
            retryable = false
            return
        }
        guard let database = error as? DatabaseError else {
            message = String(describing: error)
            retryable = false
            return
        }
        switch database.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            message = "the database is locked by another process (waited \(Int(StateStore.busyTimeout)) s)"
            retryable = true
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            message = "the file is not a valid Lookout database (corrupt?); move it away to start afresh"
            retryable = false
        case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_READONLY, .SQLITE_AUTH:
            message = "cannot open or write the file (check that it and its folder are yours and writable)"
            retryable = false
        case .SQLITE_FULL, .SQLITE_IOERR:
            message = "disk error: \(database.message ?? "I/O error")"
            retryable = true
        default:
            message = database.message ?? "\(database.resultCode)"
            retryable = false
        }
    }

    /// `state database /path/lookout.sqlite3: <message>`.
    public var description: String { code == "quota" ? message : "state database \(file): \(message)" }

    /// How scripts see it.
    public var luaError: LuaErrorInfo {
        LuaErrorInfo(code: code, message: description, retryable: retryable)
    }
}

