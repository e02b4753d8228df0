import Foundation
import LookoutTestSupport
import XCTest

/// Issue 26, the yardstick: the official Lua 5.4.4 test suite (`shared/fixtures/lua-5.4.4-testes`,
/// read where it is, never copied into the project) under the real `lookout run`. Each file that
/// stock `lua5.4` passes runs on its own, with `--trusted --memory-limit 0 --cpu-limit 0` and in
/// the default sandbox. A file may skip named line ranges (`trustedSkips`, `sandboxSkips`), blanked in a copy in a
/// temporary folder (line numbers stay), beside copies of the other files of the suite that it
/// loads; the test prints every skip and exclusion with its reason. README "How Lookout's Lua
/// differs from Lua 5.4" names the same.
final class LuaSuiteTests: CLITestCase, @unchecked Sendable {
    /// Lines of a file left out, and why.
    struct Skip {
        let lines: ClosedRange<Int>
        let reason: String
        init(_ lines: ClosedRange<Int>, _ reason: String) {
            self.lines = lines
            self.reason = reason
        }
    }

    /// Every file stock `lua5.4` passes on its own (attrib, files and main with `_port = true`, as
    /// stock needs): all 30 pass under `lookout run --trusted` (13 before issue 26).
    static let trustedFiles = [
        "api", "attrib", "bitwise", "bwcoercion", "calls", "closure", "code", "constructs", "coroutine", "cstack",
        "db", "errors", "events", "files", "gc", "gengc", "goto", "literals", "locals", "main", "math", "nextvar",
        "pm", "sort", "strings", "tpack", "tracegc", "utf8", "vararg", "verybig",
    ]
    /// Lines skipped under --trusted, and why (none: keep it so).
    static let trustedSkips: [String: [Skip]] = [:]
    /// Parts the suite itself leaves out here, as under stock `lua5.4`: `_port` skips what depends on
    /// the machine, and the parts that need the C test library `T` (ltests.c, not in any release
    /// build) skip themselves when `T` is nil.
    static let suiteOwnSkips: [String: String] = [
        "main": "_port: from line 6 on, all of it (it tests the stand-alone lua command: Lookout has none; README)",
        "attrib": "_port: lines 79-335 (C modules built into libs/, files in the current folder)",
        "files": "_port: four blocks (lines 82, 715, 803, 830) that depend on the system (seeking stdin, the running executable, dates)",
        "api": "T is nil: the C API tests (skip themselves)",
        "code": "T is nil: the opcode tests (skip themselves)",
    ]
    /// Files that pass in the default sandbox (limits off), some with lines skipped (`sandboxSkips`).
    static let sandboxFiles = [
        "api", "attrib", "bitwise", "bwcoercion", "calls", "closure", "code", "constructs", "coroutine", "errors",
        "events", "goto", "literals", "main", "math", "nextvar", "pm", "sort", "strings", "tpack", "utf8", "vararg",
        "verybig",
    ]
    /// Lines skipped in the sandbox: each uses something the sandbox leaves out on purpose (README's
    /// table); every other line of the file passes.
    static let sandboxSkips: [String: [Skip]] = [
        "attrib": [
            Skip(9...10, "require \"io\", \"os\": no io, os reduced"),
            Skip(30...39, "package.searchpath: absent"),
            Skip(42...71, "require reading package.path/package.cpath: the sandbox's searches the script folder only"),
        ],
        "calls": [
            Skip(299...299, "debug.getinfo"),
            Skip(315...336, "string.dump: binary chunks"),
            Skip(346...356, "string.dump, debug.getupvalue/setupvalue"),
            Skip(373...420, "string.dump, debug.setupvalue/upvaluejoin"),
            Skip(437...478, "string.dump: binary chunks"),
        ],
        "closure": [Skip(243...268, "debug.upvalueid/upvaluejoin")],
        "constructs": [Skip(279...279, "debug.getinfo")],
        "coroutine": [
            Skip(226...226, "debug.getinfo in a __close handler"),
            Skip(234...234, "checks what line 226's debug.getinfo returned"),
            Skip(335...352, "debug.sethook on a coroutine"),
            Skip(356...357, "debug.getinfo"),
            Skip(942...944, "debug.setupvalue"),
        ],
        "errors": [
            Skip(203...203, "io.stdin"),
            Skip(212...218, "debug.upvalueid/setuservalue"),
            Skip(221...221, "io.input"),
            Skip(224...224, "io.input"),
            Skip(226...226, "io.stdin"),
            Skip(229...229, "io.stdin"),
            Skip(254...266, "string.dump: binary chunks"),
            Skip(316...316, "io.stdin"),
            Skip(549...549, "debug.getinfo"),
        ],
        "events": [Skip(196...196, "io.stdin"), Skip(434...463, "debug.setmetatable")],
        "goto": [Skip(186...218, "debug.upvalueid")],
        "literals": [
            Skip(40...47, "debug.getinfo (through lexstring)"),
            Skip(250...254, "debug.getinfo"),
            Skip(295...319, "os.setlocale"),
        ],
        "nextvar": [Skip(334...352, "io.stdin as a table key")],
        "strings": [Skip(168...169, "io.stdin"), Skip(413...442, "os.setlocale")],
    ]
    /// Files left out of the sandbox, which they test or need throughout: what they need, and the
    /// error they stop with (checked, so the list stays true).
    static let sandboxExcluded: [String: (needs: String, error: String)] = [
        "cstack": ("io and __gc (tracegc.lua line 7, required at line 5)", "attempt to index a nil value (global 'io')"),
        "db": ("the debug library, which it tests (line 16)", "attempt to call a nil value (field 'gethook')"),
        "files": ("io and os, which it tests (line 8)", "attempt to call a nil value (field 'getenv')"),
        "gc": ("collectgarbage(\"incremental\") (line 12) and __gc, which it tests", "'incremental' is not allowed in the sandbox"),
        "gengc": ("collectgarbage(\"generational\") (line 12) and __gc, which it tests", "'generational' is not allowed in the sandbox"),
        "locals": ("io and __gc (tracegc.lua line 7, required at line 8)", "attempt to index a nil value (global 'io')"),
        "tracegc": ("io and __gc (line 7)", "attempt to index a nil value (global 'io')"),
    ]
    /// Files that need `_port = true` (they test system details that differ between machines).
    static let portable: Set<String> = ["attrib", "files", "main"]

    /// The suite's folder: LOOKOUT_LUA_TESTES, or `shared/fixtures/lua-5.4.4-testes` in a folder
    /// above the package.
    static var suite: String? {
        if let explicit = ProcessInfo.processInfo.environment["LOOKOUT_LUA_TESTES"], !explicit.isEmpty { return explicit }
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/" {
            let candidate = folder.appendingPathComponent("shared/fixtures/lua-5.4.4-testes").path
            if FileManager.default.fileExists(atPath: candidate + "/all.lua") { return candidate }
            folder.deleteLastPathComponent()
        }
        return nil
    }

    func testEveryFilePassesTrusted() throws {
        print("LuaSuiteTests --trusted: \(Self.trustedFiles.count) files; lines skipped: "
            + (Self.trustedSkips.isEmpty ? "none" : Self.trustedSkips.sorted { $0.key < $1.key }
                .map { name, skips in skips.map { "\(name).lua \($0.lines.lowerBound)-\($0.lines.upperBound): \($0.reason)" }.joined(separator: "; ") }
                .joined(separator: "; ")))
        for (name, reason) in Self.suiteOwnSkips.sorted(by: { $0.key < $1.key }) {
            print("LuaSuiteTests: \(name).lua skips itself as under stock lua5.4: \(reason)")
        }
        try runSuite(Self.trustedFiles, flags: Self.trustedFlags, skips: Self.trustedSkips)
    }

    func testEveryFilePassesInTheSandbox() throws {
        print("LuaSuiteTests sandbox: \(Self.sandboxFiles.count) files; lines skipped:")
        for (name, skips) in Self.sandboxSkips.sorted(by: { $0.key < $1.key }) {
            for skip in skips { print("  \(name).lua \(skip.lines.lowerBound)-\(skip.lines.upperBound): \(skip.reason)") }
        }
        try runSuite(Self.sandboxFiles, flags: Self.sandboxFlags, skips: Self.sandboxSkips)
    }

    /// The files left out of the sandbox stop where the list says, at something the sandbox leaves
    /// out on purpose, and nowhere earlier.
    func testSandboxExclusionsStopWhereListed() throws {
        guard let suite = Self.suite else {
            throw skipTest("the Lua 5.4.4 test suite is not in shared/fixtures/lua-5.4.4-testes above the package (or LOOKOUT_LUA_TESTES)")
        }
        XCTAssertEqual(Set(Self.sandboxFiles).union(Self.sandboxExcluded.keys), Set(Self.trustedFiles))
        var wrong: [String] = []
        for (name, expected) in Self.sandboxExcluded.sorted(by: { $0.key < $1.key }) {
            print("LuaSuiteTests sandbox: \(name).lua needs \(expected.needs)")
            let result = try run(name, suite: suite, flags: Self.sandboxFlags, skips: [])
            if result.exitCode == 0 || !result.stderr.contains(expected.error) {
                wrong.append("\(name).lua: expected to stop at \(expected.error)\n" + result.stderr.split(separator: "\n").prefix(4).joined(separator: "\n"))
            }
        }
        XCTAssertEqual(wrong, [], wrong.joined(separator: "\n\n"))
    }

    static let trustedFlags = ["--trusted", "--memory-limit", "0", "--cpu-limit", "0"]
    static let sandboxFlags = ["--memory-limit", "0", "--cpu-limit", "0"]

    private func runSuite(_ files: [String], flags: [String], skips: [String: [Skip]] = [:]) throws {
        guard let suite = Self.suite else {
            throw skipTest("the Lua 5.4.4 test suite is not in shared/fixtures/lua-5.4.4-testes above the package (or LOOKOUT_LUA_TESTES)")
        }
        var failures: [String] = []
        for name in files {
            let result = try run(name, suite: suite, flags: flags, skips: skips[name] ?? [])
            if result.exitCode != 0 {
                failures.append("\(name).lua: \(result.exitCode.map { "exit \($0)" } ?? "killed")\n"
                    + result.stderr.split(separator: "\n").prefix(8).joined(separator: "\n"))
            }
        }
        XCTAssertEqual(failures, [], "\(failures.count) of \(files.count) files fail:\n" + failures.joined(separator: "\n\n"))
    }

    /// Runs one file of the suite (with its skipped lines blanked) in a folder of its own.
    private func run(_ name: String, suite: String, flags: [String], skips: [Skip]) throws -> ProcessResult {
        let folder = work + "/" + name
        let fm = FileManager.default
        try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Copies (temporary, outside the project): require does not follow a symlink out of the folder.
        for entry in try fm.contentsOfDirectory(atPath: suite) where entry != name + ".lua" && entry.hasSuffix(".lua") {
            try fm.copyItem(atPath: suite + "/" + entry, toPath: folder + "/" + entry)
        }
        // The files are Latin-1 in places: work on bytes, line by line.
        let data = try Data(contentsOf: URL(fileURLWithPath: suite + "/" + name + ".lua"))
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { Array($0) }
        for skip in skips {
            for number in skip.lines where number - 1 < lines.count { lines[number - 1] = [] }
        }
        // all.lua's quick mode (_soft), and _port where stock needs it; on the first comment line
        // (line 2 when line 1 is a "#" line, which only the first line may be), so every line
        // keeps its number.
        let globals = "_soft = true " + (Self.portable.contains(name) ? "_port = true " : "")
        let first = lines[0].first == UInt8(ascii: "#") ? 1 : 0
        lines[first] = Array(globals.utf8) + lines[first]
        let text = Data(lines.joined(separator: [UInt8(ascii: "\n")]))
        try text.write(to: URL(fileURLWithPath: folder + "/" + name + ".lua"))
        return try lookout(["run"] + flags + [name + ".lua"], directory: folder, timeout: 300)
    }
}
