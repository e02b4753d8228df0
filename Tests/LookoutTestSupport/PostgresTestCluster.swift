import Foundation
import LookoutWire
import XCTest

/// A throwaway PostgreSQL server for the tests: Debian's PostgreSQL 15 binaries, a cluster made
/// by `initdb` in a temporary folder as an unprivileged user (the tests run as root, and
/// PostgreSQL refuses to), listening on a free loopback port and on a unix socket in that folder.
/// Started once per test process (`shared()`); stopped and its folder removed when the process
/// ends, even when it is killed: a small shell keeper owns the server and stops it when its stdin
/// (a pipe from this process) closes.
///
/// TCP connections need the administrator's password (SCRAM), so the tests use the same
/// password path as a real deployment; the unix socket trusts, and `psql(_:)` uses it for setup.
///
/// ```swift
/// let cluster = try PostgresTestCluster.shared()
/// let url = try cluster.createDatabase()   // postgresql://lookout_admin@127.0.0.1:PORT/test_3
/// ```
public final class PostgresTestCluster: Sendable {
    /// The folder of the Debian binaries.
    public static let binDirectory = "/usr/lib/postgresql/15/bin"
    /// The cluster's superuser.
    public let adminUser = "lookout_admin"
    /// Its password (random per cluster).
    public let adminPassword: String
    /// The loopback address.
    public let host = "127.0.0.1"
    /// The TCP port.
    public let port: Int
    /// The temporary folder (data directory `data`, sockets, log `server.log`).
    public let folder: String
    private let keeper: Process
    private let control: FileHandle
    private let databases = Locked<Int>(0)

    private static let started = Locked<Result<PostgresTestCluster, SetupError>?>(nil)

    /// The process's cluster, started on first use. Throws `skipTest` when PostgreSQL 15 is not
    /// installed (CI turns that into a failure), an error when it cannot start.
    public static func shared() throws -> PostgresTestCluster {
        try started.withLock { state -> Result<PostgresTestCluster, SetupError> in
            if let state { return state }
            let result: Result<PostgresTestCluster, SetupError>
            do {
                result = .success(try PostgresTestCluster())
            } catch let error as SetupError {
                result = .failure(error)
            } catch {
                result = .failure(SetupError(description: "\(error)"))
            }
            state = result
            return result
        }
        .get()
    }

    /// Why the cluster could not start.
    public struct SetupError: Error, CustomStringConvertible {
        /// What happened.
        public var description: String
    }

    private init() throws(SetupError) {
        let bin = Self.binDirectory
        guard FileManager.default.isExecutableFile(atPath: bin + "/initdb"),
              FileManager.default.isExecutableFile(atPath: bin + "/postgres") else {
            throw SetupError(description: "skip: PostgreSQL 15 is not installed (\(bin)); .ci/install-deps installs it")
        }
        guard let user = Self.unprivilegedUser() else {
            throw SetupError(description: "no unprivileged user to run PostgreSQL as (lookout-test, postgres or nobody)")
        }
        let template = NSTemporaryDirectory() + "lookout-pg.XXXXXX"
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw SetupError(description: "mkdtemp failed") }
        folder = String(cString: made)
        adminPassword = UUID().uuidString.replacingOccurrences(of: "-", with: "")
        guard chown(folder, user.uid, user.gid) == 0 else {
            throw SetupError(description: "cannot give \(folder) to \(user.name)")
        }
        let passwordFile = folder + "/pwfile"
        FileManager.default.createFile(atPath: passwordFile, contents: Data(adminPassword.utf8),
                                       attributes: [.posixPermissions: 0o600])
        _ = chown(passwordFile, user.uid, user.gid)
        let initdb = Self.run(asUser: user, [bin + "/initdb", "-D", folder + "/data", "-U", adminUser, "--pwfile", passwordFile,
                                             "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C",
                                             "--no-sync"])
        try? FileManager.default.removeItem(atPath: passwordFile)
        guard initdb.status == 0 else { throw SetupError(description: "initdb failed: \(initdb.output)") }
        port = Self.freePort()
        // The keeper: starts the server, then stops it (fast shutdown) and removes the folder when
        // its stdin closes (this process ended); `stop` and `start` stop and start it. Stopping
        // goes through pg_ctl, which watches the pid file: the shell's `wait` can hang here, since
        // the test process's blocked signals (SIGCHLD) are inherited.
        let script = """
            dir="$1"; port="$2"; bin="$3"
            exec 2>>"$dir/keeper.log"
            start() {
              "$bin/postgres" -D "$dir/data" -p "$port" -c listen_addresses=127.0.0.1 -k "$dir" \
                -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 \
                </dev/null >>"$dir/server.log" 2>&1 &
              pg=$!
            }
            start
            while read -r cmd; do
              case "$cmd" in
                stop) "$bin/pg_ctl" stop -D "$dir/data" -m fast -w -t 60 >/dev/null ;;
                start) start ;;
              esac
            done
            "$bin/pg_ctl" stop -D "$dir/data" -m fast -w -t 60 >/dev/null
            rm -rf "$dir"
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = Self.dropPrivileges(user) + ["/bin/sh", "-c", script, "keeper", folder, String(port), bin]
        let pipe = Pipe()
        // Only this process holds the write end (no child inherits it), so it closes when we end.
        _ = fcntl(pipe.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        process.standardInput = pipe
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { throw SetupError(description: "cannot start the keeper: \(error)") }
        keeper = process
        control = pipe.fileHandleForWriting
        try waitUntilReady()
    }

    /// Waits (at most 60 s) until `postmaster.pid` says the server accepts connections.
    public func waitUntilReady() throws(SetupError) {
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: folder + "/data/postmaster.pid", encoding: .utf8) {
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                if lines.count > 7, lines[7].trimmingCharacters(in: .whitespaces) == "ready" { return }
            }
            guard keeper.isRunning else { break }
            usleep(20_000)
        }
        let log = (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? ""
        let keeperLog = (try? String(contentsOfFile: folder + "/keeper.log", encoding: .utf8)) ?? ""
        throw SetupError(description: "PostgreSQL did not start on port \(port): \(log.suffix(1500))\nkeeper: \(keeperLog.suffix(800))")
    }

    /// Stops the server (fast shutdown: connections are cut) and waits until it is gone.
    public func stopServer() throws {
        control.write(Data("stop\n".utf8))
        let deadline = Date(timeIntervalSinceNow: 30)
        while FileManager.default.fileExists(atPath: folder + "/data/postmaster.pid") {
            guard Date() < deadline else { throw SetupError(description: "PostgreSQL did not stop within 30 s") }
            usleep(20_000)
        }
    }

    /// Starts the server again after `stopServer()` and waits until it accepts connections.
    public func startServer() throws {
        control.write(Data("start\n".utf8))
        try waitUntilReady()
    }

    /// A new empty database owned by the administrator; returns its URL (no password in it).
    public func createDatabase(prefix: String = "test") throws -> String {
        let name = databases.withLock { count -> String in
            count += 1
            return "\(prefix)_\(getpid())_\(count)"
        }
        try psql("CREATE DATABASE \(name)")
        return url(database: name)
    }

    /// `postgresql://USER@127.0.0.1:PORT/DATABASE`.
    public func url(database: String, user: String? = nil) -> String {
        "postgresql://\(user ?? adminUser)@\(host):\(port)/\(database)"
    }

    /// Runs SQL as the administrator over the unix socket (psql, stop on the first error);
    /// returns what psql printed (unaligned, tuples only).
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        let result = Self.run(asUser: nil, [Self.psqlPath, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", folder,
                                            "-p", String(port), "-U", adminUser, "-d", database, "-c", sql])
        guard result.status == 0 else { throw SetupError(description: "psql failed: \(result.output)") }
        return result.output
    }

    private static var psqlPath: String {
        FileManager.default.isExecutableFile(atPath: binDirectory + "/psql") ? binDirectory + "/psql" : "/usr/bin/psql"
    }

    // MARK: Helpers

    private struct User { var name: String; var uid: uid_t; var gid: gid_t }

    /// `lookout-test` (made by .ci/install-deps), else `postgres` (Debian's package), else `nobody`.
    private static func unprivilegedUser() -> User? {
        for name in ["lookout-test", "postgres", "nobody"] {
            if let entry = getpwnam(name) { return User(name: name, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid) }
        }
        return nil
    }

    private static func dropPrivileges(_ user: User?) -> [String] {
        guard let user, geteuid() == 0 else { return [] }
        return ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "--"]
    }

    /// Runs a command (as `user` when given and this process is root); its status and output.
    private static func run(asUser user: User?, _ arguments: [String]) -> (status: Int32, output: String) {
        let process = Process()
        let privileges = dropPrivileges(user)
        if privileges.isEmpty {
            process.executableURL = URL(fileURLWithPath: arguments[0])
            process.arguments = Array(arguments.dropFirst())
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = privileges + arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return (-1, "\(arguments[0]): \(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// A loopback port nothing listens on now (bound to port 0, then released).
    private static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

extension PostgresTestCluster {
    /// The cluster, or the test's skip/failure: `skipTest` when PostgreSQL is not installed.
    public static func forTest() throws -> PostgresTestCluster {
        do {
            return try shared()
        } catch let error as SetupError where error.description.hasPrefix("skip: ") {
            throw skipTest(String(error.description.dropFirst(6)))
        }
    }
}
