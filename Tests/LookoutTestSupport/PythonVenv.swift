import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A throwaway Python virtual environment with a few pip packages, shared by the tests that
/// cross-check Lookout against a Python peer (py-nightscout, pyotp, zeroconf).
///
/// `prepareIfNeeded()` runs `python3 -m venv` in a new temporary directory and
/// `pip install <packages>` (needs PyPI) once; `removeWorkDirectory()` deletes it (call it from
/// the class `tearDown`). Without `python3`, or when the venv/pip step fails,
/// `pythonOrSkip()` throws an `XCTSkip` with the reason, so the test is visibly skipped and never
/// passes silently.
public final class PythonVenv: @unchecked Sendable {
    // @unchecked Sendable: `state` and `workDir` are only touched under `lock`.

    private enum State {
        case notStarted
        case ready(python: URL)
        case unavailable(String)
    }

    /// What the skip message calls the peer (e.g. `py-nightscout interop`).
    public let label: String
    /// The pip packages installed into the venv.
    public let packages: [String]
    private let lock = NSLock()
    private var state = State.notStarted
    private var workDir: URL?

    /// A venv (not yet made) for `packages`.
    public init(label: String, packages: [String]) {
        self.label = label
        self.packages = packages
    }

    /// Creates the venv and installs the packages unless already done (or already failed).
    public func prepareIfNeeded() {
        lock.lock()
        defer { lock.unlock() }
        guard case .notStarted = state else { return }
        let started = Date()
        state = makeVenv()
        if case .ready = state {
            print("\(label) venv ready in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        }
    }

    /// The venv's python and the work directory, or an `XCTSkip` with the reason.
    public func pythonOrSkip() throws -> (URL, URL) {
        prepareIfNeeded()
        lock.lock()
        defer { lock.unlock() }
        switch state {
        case .ready(let python): return (python, workDir!)
        case .unavailable(let reason):
            print("\(label) not run: \(reason)")
            throw XCTSkip("\(label) not run: \(reason)")
        case .notStarted:
            throw XCTSkip("\(label) not run: setup did not run")
        }
    }

    /// Deletes the work directory (venv included).
    public func removeWorkDirectory() {
        lock.lock()
        defer { lock.unlock() }
        if let workDir { try? FileManager.default.removeItem(at: workDir) }
        workDir = nil
        state = .unavailable("the class tearDown already removed the venv")
    }

    private func makeVenv() -> State {
        guard let python3 = Self.findOnPath("python3") else { return .unavailable("python3 is not on PATH") }
        let slug = label.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" }
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("lookout-\(String(slug))-\(UUID().uuidString)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        } catch {
            return .unavailable("cannot create \(dir.path): \(error)")
        }
        workDir = dir
        let venv = dir.appendingPathComponent("venv")
        do {
            let r = try PythonProcess.run(python3, ["-m", "venv", venv.path], timeout: 120)
            guard r.succeeded else { return .unavailable("python3 -m venv failed: \(r.summary)") }
            let pip = venv.appendingPathComponent("bin/pip")
            let p = try PythonProcess.run(pip, ["install", "--quiet", "--disable-pip-version-check"] + packages,
                                          timeout: 300)
            guard p.succeeded else {
                return .unavailable("pip install \(packages.joined(separator: " ")) failed: \(p.summary)")
            }
        } catch {
            return .unavailable("cannot run python3: \(error)")
        }
        let python = venv.appendingPathComponent("bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            return .unavailable("the venv has no bin/python")
        }
        return .ready(python: python)
    }

    /// The first executable `name` on `PATH`.
    public static func findOnPath(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = URL(fileURLWithPath: String(dir)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Runs `PythonProcess.run` on a separate thread (off the cooperative pool).
    public static func runOffPool(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                           timeout: TimeInterval, threadName: String) async throws -> PythonProcess.Result {
        try await withCheckedThrowingContinuation { (cont: CheckedContinuation<PythonProcess.Result, any Error>) in
            let thread = Thread {
                cont.resume(with: Result {
                    try PythonProcess.run(executable, arguments, environment: environment, timeout: timeout)
                })
            }
            thread.name = threadName
            thread.start()
        }
    }
}

/// Runs a child process with piped output and a deadline.
public enum PythonProcess {
    /// A finished child.
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: Data
        public var stderr: Data
        public var timedOut: Bool
        public var succeeded: Bool { status == 0 && !timedOut }
        /// Exit status and the tail of stderr (URL credentials redacted), for skip/failure messages.
        public var summary: String {
            let text = String(decoding: stderr, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let redacted = text.replacingOccurrences(of: #"://[^/\s@]+@"#, with: "://<redacted>@", options: .regularExpression)
            let tail = redacted.count > 800 ? "…" + redacted.suffix(800) : redacted
            return (timedOut ? "timed out" : "exit status \(status)") + (tail.isEmpty ? "" : ": " + tail)
        }
    }

    /// A value filled by a reader thread.
    private final class Collected: @unchecked Sendable {
        // @unchecked Sendable: written once before `done.leave()`, read after `done.wait()`.
        var data = Data()
    }

    /// Whether the deadline fired.
    private final class Flag: @unchecked Sendable {
        // @unchecked Sendable: guarded by `lock`.
        private let lock = NSLock()
        private var value = false
        func set() { lock.withLock { value = true } }
        var isSet: Bool { lock.withLock { value } }
    }

    /// Runs `executable` and blocks until it exits. Both pipes are read to the end (on two
    /// threads) before `waitUntilExit`, so a chatty child cannot block on a full pipe; after
    /// `timeout` seconds the child gets SIGKILL.
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                    timeout: TimeInterval) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let pid = process.processIdentifier
        let exited = Flag(), timedOut = Flag()
        let killer = DispatchWorkItem {
            guard !exited.isSet else { return }
            timedOut.set()
            kill(pid, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)

        let done = DispatchGroup()
        let errData = Collected()
        let errHandle = err.fileHandleForReading
        done.enter()
        Thread {
            errData.data = errHandle.readDataToEndOfFile()
            done.leave()
        }.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        done.wait()
        process.waitUntilExit()
        exited.set()
        killer.cancel()
        return Result(status: process.terminationStatus, stdout: outData, stderr: errData.data, timedOut: timedOut.isSet)
    }
}
