import Foundation
import LookoutTestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Base class: every test gets a fresh folder with `home/` (LOOKOUT_HOME: config and state) and
/// `work/` (the current directory of `lookout`, where scripts are written). Processes a test
/// started are killed in tearDown if they still run.
class CLITestCase: XCTestCase, @unchecked Sendable {
    // @unchecked Sendable: the fields are set in setUp and used by the test's own thread.
    private(set) var root = ""
    /// LOOKOUT_HOME.
    var home: String { root + "/home" }
    /// The working directory of `lookout`.
    var work: String { root + "/work" }
    private var processes: [ChildProcess] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        var template = Array((NSTemporaryDirectory() + "/lookout-cli-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw ChildProcess.SpawnError(message: "mkdtemp: \(String(cString: strerror(errno)))")
        }
        root = URL(fileURLWithPath: String(cString: made)).standardizedFileURL.path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for process in processes { process.terminate() }
        processes = []
        if !root.isEmpty { try? FileManager.default.removeItem(atPath: root) }
        super.tearDown()
    }

    /// The environment of `lookout`: nothing from the user's account (HOME and XDG point into the
    /// test folder too), LOOKOUT_HOME set.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": root,
            "LOOKOUT_HOME": home,
            "LANG": "C.UTF-8",
            "TERM": "dumb",
        ]
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// Writes a file under `work/` (folders created); returns its path.
    @discardableResult
    func writeFile(_ relativePath: String, _ text: String) throws -> String {
        let path = work + "/" + relativePath
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A port nothing listens on now (bound and released at once).
    func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw skipTest("cannot bind a port on 127.0.0.1") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts `lookout` with `arguments` in `work/`.
    func launch(
        _ arguments: [String], environment extra: [String: String] = [:], directory: String? = nil,
        streams: ChildProcess.Streams = .pipes, file: StaticString = #filePath, line: UInt = #line
    ) throws -> ChildProcess {
        let binary = try LookoutBinary.require(file: file, line: line)
        let process = try ChildProcess.spawn(
            executable: binary, arguments: arguments, environment: environment(extra), directory: directory ?? work,
            streams: streams)
        processes.append(process)
        return process
    }

    /// Runs `lookout` to the end: writes `stdin` (then closes it) and returns the result; a run that
    /// takes longer than `timeout` is killed and fails the test.
    func lookout(
        _ arguments: [String], stdin: String = "", environment extra: [String: String] = [:],
        directory: String? = nil, timeout: TimeInterval = 60, file: StaticString = #filePath, line: UInt = #line
    ) throws -> ProcessResult {
        let process = try launch(arguments, environment: extra, directory: directory, file: file, line: line)
        if !stdin.isEmpty { process.write(stdin) }
        process.closeInput()
        return try XCTUnwrap(process.waitForExit(timeout: timeout, file: file, line: line), file: file, line: line)
    }

    /// Writes `source` to `work/<name>` and runs `lookout run <name> <arguments…>`.
    func runScript(
        _ source: String, name: String = "script.lua", flags: [String] = [], arguments: [String] = [],
        stdin: String = "", timeout: TimeInterval = 60, file: StaticString = #filePath, line: UInt = #line
    ) throws -> ProcessResult {
        try writeFile(name, source)
        return try lookout(["run"] + flags + [name] + arguments, stdin: stdin, timeout: timeout, file: file, line: line)
    }

    /// Asserts the exit status, showing the whole result when it differs.
    /// Waits until `condition` holds (checked every 100 ms); after `timeout` seconds fails the
    /// test with `what` and `logs()` (what the processes involved wrote) and throws.
    func eventually(_ what: String, timeout: TimeInterval = 30, logs: () -> String,
                    _ condition: @escaping () async throws -> Bool) async throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if (try? await condition()) == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTFail("timed out (\(Int(timeout)) s) waiting for: \(what)\n\(logs())")
        throw CancellationError()
    }

    func assertExit(
        _ result: ProcessResult, _ expected: Int32, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(result.exitCode, expected, "unexpected exit status:\n\(result)", file: file, line: line)
    }
}
