import Foundation
import LookoutSim

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// P3's Nightscout simulator in a process of its own (`lookout-bench --p3-server DAYS`), so the
/// Kit's timing holds only the Kit's work and the server's work shares the machine as a real
/// server's would: the child seeds the readings, prints `PORT TOKEN` on one line and serves until
/// its standard input closes.
enum HistoryServerProcess {
    /// The hidden option that makes `lookout-bench` the server.
    static let option = "--p3-server"

    /// The child's side: runs until standard input ends, then exits.
    static func serve(days: Int, pageLimit: Int) async -> Never {
        let sim = NightscoutSimulator(options: .init(authFailDelay: .zero, api3MaxLimit: pageLimit))
        do {
            let base = try await sim.start()
            let token = await sim.addSubject(name: "lookout-bench", roles: ["readable"])
            let (documents, _) = HistoryFixture.entries(count: days * HistorySyncBenchmark.readingsPerDay)
            await sim.seed("entries", documents)
            FileHandle.standardOutput.write(Data("\(base.port ?? 0) \(token)\n".utf8))
        } catch {
            FileHandle.standardError.write(Data("lookout-bench \(option): \(error)\n".utf8))
            exit(1)
        }
        // The parent closes our standard input when it is done (or dies).
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                _ = FileHandle.standardInput.readDataToEndOfFile()
                done.resume()
            }
        }
        await sim.stop()
        exit(0)
    }

    /// A running server child.
    final class Child {
        let process = Process()
        private let input = Pipe()
        let base: URL
        let token: String

        /// Starts `lookout-bench --p3-server DAYS` and waits for its `PORT TOKEN` line.
        init(days: Int, pageLimit: Int) throws {
            process.executableURL = URL(fileURLWithPath: ProcessSpawner.ownExecutable())
            process.arguments = [HistoryServerProcess.option, String(days), String(pageLimit)]
            let output = Pipe()
            process.standardOutput = output
            process.standardInput = input
            try process.run()
            var line = Data()
            while true {
                let byte = output.fileHandleForReading.readData(ofLength: 1)
                if byte.isEmpty || byte.first == UInt8(ascii: "\n") { break }
                line.append(byte)
            }
            let parts = String(decoding: line, as: UTF8.self).split(separator: " ")
            guard parts.count == 2, let port = Int(parts[0]), port > 0,
                  let url = URL(string: "http://127.0.0.1:\(port)")
            else {
                process.terminate()
                throw BenchFailure("the P3 server process did not start (it printed \(String(reflecting: String(decoding: line, as: UTF8.self))))")
            }
            base = url
            token = String(parts[1])
        }

        /// Closes the child's standard input and waits for it to exit.
        func stop() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }
}
