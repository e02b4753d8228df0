import Foundation
import XCTest

/// `lookout stubs DIR`, `--help`, `--version` and unknown commands.
final class StubsCommandTests: CLITestCase, @unchecked Sendable {
    func testStubsWritesOneMetaFilePerModule() throws {
        let result = try lookout(["stubs", "out/stubs"])
        assertExit(result, 0)
        let directory = work + "/out/stubs"
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        let modules = files.filter { $0.hasSuffix(".lua") }.map { String($0.dropLast(4)) }
        XCTAssertEqual(files.count, modules.count, "only .lua files: \(files)")
        for core in ["json", "script", "task", "timer"] {
            XCTAssertTrue(modules.contains(core), "missing \(core).lua in \(files)")
        }
        for module in modules {
            let text = try String(contentsOfFile: "\(directory)/\(module).lua", encoding: .utf8)
            XCTAssertTrue(text.hasPrefix("---@meta"), "\(module).lua starts with \(text.prefix(40))")
        }
        // The summary names every module written, and nothing else.
        XCTAssertTrue(result.stdout.contains("wrote \(modules.count) stubs"), result.description)
        let listed = result.stdout.split(separator: ":").last.map {
            $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        } ?? []
        XCTAssertEqual(listed.sorted(), modules.sorted(), result.description)
    }

    func testStubsIntoAFileIsAnError() throws {
        try writeFile("taken", "not a folder")
        let result = try lookout(["stubs", "taken"])
        assertExit(result, 2)
        XCTAssertTrue(result.stderr.contains("taken"), result.description)
    }

    func testStubsNeedsAFolder() throws {
        let result = try lookout(["stubs"])
        assertExit(result, 2)
    }

    func testHelpListsTheCommands() throws {
        let result = try lookout(["--help"])
        assertExit(result, 0)
        for command in ["run", "repl", "stubs"] {
            XCTAssertTrue(
                result.stdout.range(of: "\\b\(command)\\b", options: .regularExpression) != nil,
                "--help does not list \(command)\n\(result)")
        }
    }

    func testHelpSubcommandShowsRunOptions() throws {
        let result = try lookout(["help", "run"])
        assertExit(result, 0)
        XCTAssertTrue(result.stdout.contains("--memory-limit"), result.description)
        XCTAssertTrue(result.stdout.contains("--trusted"), result.description)
    }

    /// `lookout run --help` (and `-h`) must show the help of `run`: the passthrough argument
    /// swallows the flag and it is run as a script named "--help".
    func testRunHelpFlagShowsHelp() throws {
        for flag in ["--help", "-h"] {
            let result = try lookout(["run", flag])
            assertExit(result, 0)
            XCTAssertTrue(result.stdout.contains("--memory-limit"), "`lookout run \(flag)`\n\(result)")
            XCTAssertFalse(result.stderr.contains("cannot read"), result.description)
        }
    }

    func testOtherCommandsHelpFlag() throws {
        for command in ["repl", "stubs"] {
            let result = try lookout([command, "--help"])
            assertExit(result, 0)
            XCTAssertTrue(result.stdout.contains("OVERVIEW"), result.description)
        }
    }

    func testVersion() throws {
        let result = try lookout(["--version"])
        assertExit(result, 0)
        XCTAssertTrue(
            result.stdout.range(of: #"^\d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil, result.description)
    }

    func testUnknownCommandIsUsageError() throws {
        let result = try lookout(["nosuch"])
        assertExit(result, 2)
        XCTAssertTrue(result.stderr.contains("nosuch"), result.description)
        XCTAssertEqual(result.stdout, "")
    }
}
