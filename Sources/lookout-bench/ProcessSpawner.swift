import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts programs for the start-up benchmark and times them from spawn to exit.
enum ProcessSpawner {
    /// Runs `path` with `arguments` until it exits, standard output and error going to /dev/null.
    /// - Returns: wall-clock seconds from `posix_spawn` to `waitpid`, and the exit status
    ///   (128 + signal when it was killed).
    static func time(_ path: String, _ arguments: [String], environment: [String: String]) throws -> (seconds: Double, status: Int32) {
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        #if canImport(Glibc)
        var actions = posix_spawn_file_actions_t()
        #else
        var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)

        var pid: pid_t = 0
        let start = BenchClock.monotonic()
        let error = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard error == 0 else { throw BenchFailure("cannot start \(path): \(String(cString: strerror(error)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let seconds = BenchClock.monotonic() - start
        let signal = status & 0x7f
        return (seconds, signal == 0 ? (status >> 8) & 0xff : 128 + signal)
    }

    /// Runs a program and returns what it wrote to standard output (trimmed) and its exit status.
    static func output(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (text: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), process.terminationStatus)
    }

    /// The first executable called `name` on `PATH`.
    static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The path of the running executable (`/proc/self/exe`, else `argv[0]`).
    static func ownExecutable() -> String {
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return target }
        let first = CommandLine.arguments[0]
        if first.hasPrefix("/") { return first }
        if first.contains("/") { return FileManager.default.currentDirectoryPath + "/" + first }
        return which(first) ?? first
    }
}
