import Foundation
import XCTest

/// `lookout run --trusted`: the Lua of the manual, less what would break the host (issue 26).
final class TrustedRunTests: CLITestCase, @unchecked Sendable {
    /// print and io.write share one order, also into a pipe (io.write is buffered by C stdio).
    func testPrintAndIoWriteKeepTheirOrder() throws {
        let result = try runScript(#"""
            io.write("A\n") print("B") io.write("C\n")
            io.stdout:write("D") print("E")
            """#, flags: ["--trusted"])
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "A\nB\nC\nDE\n")
    }

    func testTrustedScriptsHaveTheDebugLibrary() throws {
        let result = try runScript(#"""
            local info = debug.getinfo(1, "Sl")
            print(info.short_src, info.currentline, (debug.getlocal(1, 1)))
            """#, flags: ["--trusted"])
        assertExit(result, 0)
        XCTAssertEqual(result.stdout, "script.lua\t1\tinfo\n")
    }
}
