import Foundation
import Lua
import LookoutTestSupport
import XCTest

/// Differential test of `json.decode` (Sources/LuaShim/json.c) against Python's `json` module:
/// `lua/json_reference.py` generates a corpus of tricky numbers (multiples of 2^64 written as
/// digits, int64 and double boundaries, halfway cases, long mantissas and exponents, under- and
/// overflow), random documents (escapes, surrogates, duplicate keys, whitespace) and invalid
/// texts, and writes Python's value for each in a canonical form; `lua/json_differential.lua`
/// decodes the same texts with Lookout and compares exactly (integers by value, floats by bits,
/// strings by bytes, errors with errors).
final class JSONDifferentialTests: XCTestCase {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("lua")

    /// Runs python3 on json_reference.py and returns its output (the corpus with the expected values).
    func referenceCorpus(seed: Int, count: Int) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", Self.folder.appendingPathComponent("json_reference.py").path, String(seed), String(count),
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "python3 json_reference.py failed (python3 is installed by .ci/install-deps)")
        return String(decoding: data, as: UTF8.self)
    }

    func testDecodeAgreesWithPythonOnTrickyNumbersAndDocuments() async throws {
        let corpus = try referenceCorpus(seed: 20_261_126, count: 3000)
        let lines = corpus.split(separator: "\n").count
        XCTAssertGreaterThan(lines, 7000)
        let checker = try String(contentsOf: Self.folder.appendingPathComponent("json_differential.lua"), encoding: .utf8)
        let transcript = Transcript()
        let runtime = LuaRuntime(
            options: testOptions(transcript, name: "json_differential.lua") {
                $0.cpuLimit = 0  // a behaviour test, not a speed test
                $0.memoryLimit = 512 << 20
            })
        try await runtime.start()
        let spawnError = await runtime.withEngine { engine in
            engine.spawnChunk(
                source: Array(checker.utf8), chunkName: "@json_differential.lua", label: "differential",
                arguments: [.text(corpus)])
        }
        XCTAssertNil(spawnError)
        await runtime.withEngine { $0.drain() }
        await runtime.waitUntilIdle()
        await runtime.close()
        XCTAssertEqual(transcript.errors.map(\.description), [])
        let mismatches = transcript.lines.filter { $0.hasPrefix("MISMATCH") }
        XCTAssertEqual(mismatches, [], mismatches.joined(separator: "\n"))
        XCTAssertEqual(transcript.lines.last, "checked \(lines), mismatches 0")
    }
}
