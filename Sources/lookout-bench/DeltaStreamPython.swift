import Foundation

/// P4's anchor: a Python `websockets` client in a throwaway venv that `json.loads` every message.
struct DeltaStreamPython {
    /// The venv's interpreter.
    let python: String
    /// The client script.
    let script: String
    /// The `websockets` version installed.
    let version: String
    /// The venv's directory (removed by `remove()`).
    let directory: String

    /// The client: connects, reads the hello, prints `ready`, then parses `count` messages and
    /// prints the seconds from the first to the last.
    static let source = """
        import asyncio, json, sys, time
        import websockets

        async def main(url, count):
            async with websockets.connect(url, max_size=None, compression=None) as ws:
                json.loads(await ws.recv())  # the hello
                print("ready", flush=True)
                n, total, first = 0, 0.0, 0.0
                async for message in ws:
                    d = json.loads(message)
                    total += d["updates"][0]["values"][0]["value"]
                    n += 1
                    if n == 1:
                        first = time.perf_counter()
                    if n == count:
                        break
                print("seconds=%r" % (time.perf_counter() - first), flush=True)
                print("sum=%r" % total, flush=True)

        asyncio.run(main(sys.argv[1], int(sys.argv[2])))
        """

    /// Makes the venv and installs `websockets` (about 4 s with a warm pip cache).
    /// - Throws: `BenchFailure` with a SKIP reason when python3, venv or pip cannot be used.
    static func prepare() throws -> DeltaStreamPython {
        guard let python3 = ProcessSpawner.which("python3") else { throw BenchFailure("SKIP: python3 not found on PATH") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-bench-p4-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        let (venvOut, venvStatus) = try ProcessSpawner.output(python3, ["-m", "venv", directory + "/venv"])
        guard venvStatus == 0 else {
            try? FileManager.default.removeItem(atPath: directory)
            throw BenchFailure("SKIP: python3 -m venv failed (status \(venvStatus)) \(venvOut.prefix(200))")
        }
        let python = directory + "/venv/bin/python"
        let (_, pipStatus) = try ProcessSpawner.output(
            python, ["-m", "pip", "install", "-q", "--disable-pip-version-check", "websockets"])
        let (version, importStatus) = try ProcessSpawner.output(python, ["-c", "import websockets; print(websockets.__version__)"])
        guard pipStatus == 0, importStatus == 0 else {
            try? FileManager.default.removeItem(atPath: directory)
            throw BenchFailure("SKIP: pip install websockets failed (status \(pipStatus); offline?)")
        }
        let script = directory + "/p4_client.py"
        guard FileManager.default.createFile(atPath: script, contents: Data(source.utf8)) else {
            throw BenchFailure("cannot write \(script)")
        }
        return DeltaStreamPython(python: python, script: script, version: version, directory: directory)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    /// What one client run measured.
    struct Result {
        var seconds: Double
        var sum: Double
    }

    /// Runs the client on `url` (the feeder floods it); returns when the client has parsed
    /// `count` messages.
    func run(url: String, count: Int) async throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, url, String(count)]
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let exited = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { p in
            exited.continuation.yield(p.terminationStatus)
            exited.continuation.finish()
        }
        try process.run()
        // Collect output on threads of their own (a full pipe would stall the client).
        let outData = PipeCollector(out.fileHandleForReading), errData = PipeCollector(err.fileHandleForReading)
        var it = exited.stream.makeAsyncIterator()
        let status = await it.next() ?? -1
        let text = outData.wait(), errors = errData.wait()
        guard status == 0 else { throw BenchFailure("the Python client exited with status \(status): \(errors.suffix(400))") }
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let v = Double(parts[1]) { values[String(parts[0])] = v }
        }
        guard let seconds = values["seconds"], let sum = values["sum"] else {
            throw BenchFailure("the Python client printed no figures: \(text.suffix(200)) \(errors.suffix(400))")
        }
        return Result(seconds: seconds, sum: sum)
    }
}

/// Reads a pipe to its end on a thread of its own.
final class PipeCollector: @unchecked Sendable {
    // @unchecked Sendable: `data` is written once by the thread before `done` is signalled.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
        thread.start()
    }

    /// Waits for the end of the pipe (call after the process exited).
    func wait() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}
