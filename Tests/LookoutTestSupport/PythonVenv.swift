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
/// Versions are pinned in `Tests/python-peers.txt`. With `LOOKOUT_PYTHON_VENV=DIR` (what
/// `.ci/run` sets, after installing that file into `DIR`) the tests use that venv, after a
/// `pip install` of the pinned packages that does nothing when they are present. Otherwise
/// `prepareIfNeeded()` runs `python3 -m venv` in a new temporary directory and `pip install`s the
/// pinned packages (needs PyPI) once. `removeWorkDirectory()` deletes the temporary directory
/// (never the shared venv; call it from the class `tearDown`). Without `python3`, or when the venv/pip step fails,
/// `pythonOrSkip()` throws `skipTest(reason)` (an `XCTSkip`, or a failure under
/// `LOOKOUT_FAIL_ON_SKIP=1`), so the test is visibly skipped and never
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

    /// A venv (not yet made) for `packages` (names; the versions come from `Tests/python-peers.txt`).
    public init(label: String, packages: [String]) {
        self.label = label
        self.packages = packages
    }

    /// `Tests/python-peers.txt`: the pinned requirement (`name==version`) of each peer, by name.
    public static let pins: [String: String] = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../python-peers.txt").standardizedFileURL
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [:] }
        var pins: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let requirement = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
                .trimmingCharacters(in: .whitespaces)
            guard let name = requirement.components(separatedBy: "==").first, !name.isEmpty else { continue }
            pins[name.lowercased()] = requirement
        }
        return pins
    }()

    /// The pip arguments for `packages`: each pinned, or the reason one has no pin.
    private func pinnedPackages() -> Result<[String], PinError> {
        var pinned: [String] = []
        for name in packages {
            guard let pin = Self.pins[name.lowercased()] else {
                return .failure(PinError(message: "\(name) has no version pin in Tests/python-peers.txt"))
            }
            pinned.append(pin)
        }
        return .success(pinned)
    }

    private struct PinError: Error { var message: String }

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

    /// The venv's python and the work directory, or `skipTest` with the reason.
    public func pythonOrSkip() throws -> (URL, URL) {
        prepareIfNeeded()
        lock.lock()
        defer { lock.unlock() }
        switch state {
        case .ready(let python): return (python, workDir!)
        case .unavailable(let reason):
            print("\(label) not run: \(reason)")
            throw skipTest("\(label) not run: \(reason)")
        case .notStarted:
            throw skipTest("\(label) not run: setup did not run")
        }
    }

    /// Deletes the work directory (with the venv, unless it is the shared `LOOKOUT_PYTHON_VENV`).
    public func removeWorkDirectory() {
        lock.lock()
        defer { lock.unlock() }
        if let workDir { try? FileManager.default.removeItem(at: workDir) }
        workDir = nil
        state = .unavailable("the class tearDown already removed the venv")
    }

    private func makeVenv() -> State {
        let requirements: [String]
        switch pinnedPackages() {
        case .success(let pinned): requirements = pinned
        case .failure(let error): return .unavailable(error.message)
        }
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
        let shared = ProcessInfo.processInfo.environment["LOOKOUT_PYTHON_VENV"].flatMap { $0.isEmpty ? nil : $0 }
        let venv = shared.map { URL(fileURLWithPath: $0) } ?? dir.appendingPathComponent("venv")
        do {
            if shared == nil {
                let r = try PythonProcess.run(python3, ["-m", "venv", venv.path], timeout: 120)
                guard r.succeeded else { return .unavailable("python3 -m venv failed: \(r.summary)") }
            }
            if shared != nil {
                // Prepared by .ci/run: check the pinned versions are there (no network).
                let check = try PythonProcess.run(venv.appendingPathComponent("bin/python"), ["-c", Self.versionCheck] + requirements,
                                                  timeout: 60)
                guard check.succeeded else {
                    return .unavailable("LOOKOUT_PYTHON_VENV=\(venv.path) lacks the pinned peers "
                                        + "(pip install -r Tests/python-peers.txt): \(check.summary)")
                }
            } else {
                let pip = venv.appendingPathComponent("bin/pip")
                let p = try PythonProcess.run(pip, ["install", "--quiet", "--disable-pip-version-check"] + requirements,
                                              timeout: 300)
                guard p.succeeded else {
                    return .unavailable("pip install \(requirements.joined(separator: " ")) failed: \(p.summary)")
                }
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

    /// Exits 1 naming each `name==version` argument not installed at that version.
    static let versionCheck = """
        import sys, importlib.metadata as m
        bad = []
        for requirement in sys.argv[1:]:
            name, version = requirement.split("==")
            try:
                found = m.version(name)
                if found != version: bad.append(f"{name} {found} (pinned {version})")
            except m.PackageNotFoundError:
                bad.append(f"{name} missing")
        if bad: sys.exit("; ".join(bad))
        """

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
