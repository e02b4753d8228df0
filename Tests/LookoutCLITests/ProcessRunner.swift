import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A spawned process whose output is collected on a thread of its own; tests wait for output or
/// the exit with a deadline instead of sleeping.
final class ChildProcess: @unchecked Sendable {
    // @unchecked Sendable: every mutable field is guarded by `condition`.
    enum Stream: CustomStringConvertible {
        case stdout, stderr
        var description: String { self == .stdout ? "stdout" : "stderr" }
    }

    /// Where the child's standard streams go.
    enum Streams {
        /// Pipes for stdin, stdout and stderr.
        case pipes
        /// All three on a terminal (the pty slave at this path); the child gets its own session so
        /// the terminal becomes its controlling terminal. `master` is read as stdout.
        case terminal(master: Int32, slavePath: String)
    }

    let pid: pid_t
    let commandLine: String
    private let condition = NSCondition()
    private var stdoutData = Data()
    private var stderrData = Data()
    private var openReaders = 0
    private var waitStatus: Int32?
    private var inputFD: Int32
    private let ownsInput: Bool

    private init(pid: pid_t, commandLine: String, inputFD: Int32, readers: [(Int32, Stream)], ownsReaders: Bool) {
        self.pid = pid
        self.ownsInput = ownsReaders
        self.commandLine = commandLine
        self.inputFD = inputFD
        self.openReaders = readers.count
        let reader = Thread { [self] in self.readLoop(readers, closeWhenDone: ownsReaders) }
        reader.name = "output of \(pid)"
        reader.start()
        let waiter = Thread { [self] in self.waitLoop() }
        waiter.name = "waitpid \(pid)"
        waiter.start()
    }

    /// Spawns `executable` with exactly `environment`, in `directory`.
    static func spawn(
        executable: String, arguments: [String], environment: [String: String], directory: String?,
        streams: Streams = .pipes
    ) throws -> ChildProcess {
        ignoreSIGPIPE
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        // A clean signal state: default actions and nothing blocked, whatever the test runner has.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGTTOU, SIGTTIN, SIGTSTP] {
            sigaddset(&defaults, number)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)

        var parentEnds: [Int32] = []
        var childEnds: [Int32] = []
        var readers: [(Int32, Stream)] = []
        var inputFD: Int32 = -1
        var ownsReaders = true
        switch streams {
        case .pipes:
            var input: [Int32] = [-1, -1], output: [Int32] = [-1, -1], error: [Int32] = [-1, -1]
            guard ChildProcess.closeOnExecPipe(&input), ChildProcess.closeOnExecPipe(&output), ChildProcess.closeOnExecPipe(&error) else {
                throw SpawnError(message: "pipe: \(String(cString: strerror(errno)))")
            }
            posix_spawn_file_actions_adddup2(&actions, input[0], 0)
            posix_spawn_file_actions_adddup2(&actions, output[1], 1)
            posix_spawn_file_actions_adddup2(&actions, error[1], 2)
            childEnds = [input[0], output[1], error[1]]
            parentEnds = [input[1], output[0], error[0]]
            inputFD = input[1]
            readers = [(output[0], .stdout), (error[0], .stderr)]
        case .terminal(let master, let slavePath):
            // setsid happens before the file actions, so opening the slave (without O_NOCTTY) makes
            // it the controlling terminal of the new session.
            flags |= Int32(spawnSetSID)
            posix_spawn_file_actions_addopen(&actions, 0, slavePath, O_RDWR, 0)
            posix_spawn_file_actions_adddup2(&actions, 0, 1)
            posix_spawn_file_actions_adddup2(&actions, 0, 2)
            inputFD = master
            readers = [(master, .stdout)]
            ownsReaders = false
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        if let directory {
            guard let addChdir = ChildProcess.addChdir else {
                throw SpawnError(message: "posix_spawn_file_actions_addchdir_np is not available")
            }
            let status = addChdir(&actions, directory)
            guard status == 0 else { throw SpawnError(message: "addchdir \(directory): \(String(cString: strerror(status)))") }
        }

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.sorted { $0.key < $1.key }
            .map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        for fd in childEnds { close(fd) }
        guard status == 0 else {
            for fd in parentEnds { close(fd) }
            throw SpawnError(message: "posix_spawn \(executable): \(String(cString: strerror(status)))")
        }
        let commandLine = ([executable] + arguments).map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
        return ChildProcess(pid: pid, commandLine: commandLine, inputFD: inputFD, readers: readers, ownsReaders: ownsReaders)
    }

    struct SpawnError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// `posix_spawn_file_actions_addchdir_np` (glibc ≥ 2.29, macOS ≥ 10.15): Swift does not import
    /// the GNU declaration, so it is looked up at run time.
    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private static let addChdir: AddChdir? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else {
            return nil
        }
        return unsafeBitCast(symbol, to: AddChdir.self)
    }()

    /// A pipe whose ends are closed in spawned children (the file actions dup the child's ends).
    /// Only the test's own thread spawns, so setting the flag after `pipe` leaves no window.
    private static func closeOnExecPipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    private static let ignoreSIGPIPE: Void = {
        // Writing to a child that has gone must fail with EPIPE, not kill the test runner.
        signal(SIGPIPE, SIG_IGN)
    }()

    // MARK: Input

    /// Writes bytes to the child's stdin (or the terminal); false if it cannot take them.
    @discardableResult
    func write(_ text: String) -> Bool {
        let fd = condition.withLock { inputFD }
        guard fd >= 0 else { return false }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { writeDescriptor(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            bytes = bytes.dropFirst(n)
        }
        return true
    }

    /// Closes the child's stdin (end of input). Not for terminals: the master stays open.
    func closeInput() {
        condition.withLock {
            if inputFD >= 0, ownsInput { close(inputFD) }
            inputFD = -1
        }
    }

    /// Sends a signal.
    func send(signal number: Int32) {
        if condition.withLock({ waitStatus == nil }) { kill(pid, number) }
    }

    // MARK: Output

    /// What the child wrote to a stream so far.
    func output(_ stream: Stream = .stdout) -> String {
        condition.withLock { String(decoding: stream == .stdout ? stdoutData : stderrData, as: UTF8.self) }
    }

    /// What the child wrote to stdout from byte `after` on.
    func output(after: Int) -> String {
        condition.withLock { String(decoding: stdoutData.dropFirst(min(after, stdoutData.count)), as: UTF8.self) }
    }

    /// Bytes written to stdout so far (a mark for `waitForOutput(after:)`).
    var outputCount: Int { condition.withLock { stdoutData.count } }

    /// Where the last line of stdout so far starts (a mark that keeps the prompt of a terminal line).
    var lastLineStart: Int {
        condition.withLock {
            guard let newline = stdoutData.lastIndex(of: 0x0A) else { return 0 }
            return stdoutData.distance(from: stdoutData.startIndex, to: newline) + 1
        }
    }

    /// Waits until `predicate` holds for the stream's text (from byte `after` on); on timeout
    /// records a failure showing the output and returns false.
    @discardableResult
    func waitForOutput(
        _ stream: Stream = .stdout, after: Int = 0, timeout: TimeInterval = 20, _ what: String,
        file: StaticString = #filePath, line: UInt = #line, transform: (String) -> String = { $0 },
        until predicate: (String) -> Bool
    ) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let data = stream == .stdout ? stdoutData : stderrData
            let text = transform(String(decoding: data.dropFirst(min(after, data.count)), as: UTF8.self))
            if predicate(text) { return true }
            let finished = openReaders == 0 && waitStatus != nil
            if finished || !condition.wait(until: deadline) {
                let all = transform(String(decoding: data, as: UTF8.self))
                let other = stream == .stdout ? String(decoding: stderrData, as: UTF8.self) : ""
                XCTFail(
                    "\(finished ? "process ended" : "timed out after \(timeout) s") waiting for \(what) on \(stream) of "
                        + "`\(commandLine)`\n--- \(stream) ---\n\(all)\n--- since mark ---\n\(text)"
                        + (other.isEmpty ? "" : "\n--- stderr ---\n\(other)"),
                    file: file, line: line)
                return false
            }
        }
    }

    /// Waits until `text` appears on the stream (after byte `after`).
    @discardableResult
    func waitForOutput(
        _ stream: Stream = .stdout, after: Int = 0, containing text: String, timeout: TimeInterval = 20,
        file: StaticString = #filePath, line: UInt = #line
    ) -> Bool {
        waitForOutput(stream, after: after, timeout: timeout, "\"\(text)\"", file: file, line: line) { $0.contains(text) }
    }

    // MARK: Exit

    /// Whether the process has ended.
    var hasExited: Bool { condition.withLock { waitStatus != nil } }

    /// Waits for the exit (and the end of its output). On timeout kills the process, records a
    /// failure and returns nil.
    func waitForExit(timeout: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line) -> ProcessResult? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        while !(waitStatus != nil && openReaders == 0) {
            if !condition.wait(until: deadline) {
                condition.unlock()
                kill(pid, SIGKILL)
                let killed = waitForEnd(seconds: 10)
                XCTFail(
                    "`\(commandLine)` did not finish within \(timeout) s; killed it\n\(killed.description)",
                    file: file, line: line)
                return nil
            }
        }
        let result = makeResult()
        condition.unlock()
        return result
    }

    /// Kills the process if it still runs and waits for it (teardown).
    func terminate() {
        if !hasExited { kill(pid, SIGKILL) }
        _ = waitForEnd(seconds: 10)
        closeInput()
    }

    private func waitForEnd(seconds: TimeInterval) -> ProcessResult {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !(waitStatus != nil && openReaders == 0) {
            if !condition.wait(until: deadline) { break }
        }
        return makeResult()
    }

    /// With `condition` held.
    private func makeResult() -> ProcessResult {
        var result = ProcessResult(
            exitCode: nil, signal: nil, stdout: String(decoding: stdoutData, as: UTF8.self),
            stderr: String(decoding: stderrData, as: UTF8.self))
        if let status = waitStatus {
            if status & 0x7f == 0 {
                result.exitCode = (status >> 8) & 0xff
            } else {
                result.signal = status & 0x7f
            }
        }
        return result
    }

    // MARK: Threads

    private func readLoop(_ readers: [(Int32, Stream)], closeWhenDone: Bool) {
        var open = readers
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !open.isEmpty {
            var fds = open.map { pollfd(fd: $0.0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), 200)
            if ready < 0 && errno != EINTR { break }
            var finished: [Int32] = []
            for (index, pfd) in fds.enumerated() where pfd.revents != 0 {
                let n = read(pfd.fd, &buffer, buffer.count)
                if n > 0 {
                    condition.withLock {
                        if open[index].1 == .stdout {
                            stdoutData.append(contentsOf: buffer[0..<n])
                        } else {
                            stderrData.append(contentsOf: buffer[0..<n])
                        }
                        condition.broadcast()
                    }
                } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                    finished.append(pfd.fd)  // end of file (a pty master reads EIO once the child is gone)
                }
            }
            // A terminal master never reads EOF while it is open in this process: stop once the child has
            // exited and nothing more is buffered.
            if !closeWhenDone, ready == 0, condition.withLock({ waitStatus != nil }) {
                finished = open.map(\.0)
            }
            for fd in finished {
                if closeWhenDone { close(fd) }
                open.removeAll { $0.0 == fd }
                condition.withLock {
                    openReaders -= 1
                    condition.broadcast()
                }
            }
        }
        condition.withLock {
            openReaders = 0
            condition.broadcast()
        }
    }

    private func waitLoop() {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR {
                status = 0x7f  // unknown; reported as a signal
                break
            }
        }
        condition.withLock {
            waitStatus = status
            condition.broadcast()
        }
    }
}

#if canImport(Glibc)
/// POSIX_SPAWN_SETSID (glibc ≥ 2.26); Swift does not see the GNU macro.
let spawnSetSID: Int32 = 0x80
#else
let spawnSetSID: Int32 = 0x400
#endif

private func writeDescriptor(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int { write(fd, bytes, count) }
