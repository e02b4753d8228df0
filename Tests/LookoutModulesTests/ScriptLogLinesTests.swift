import LookoutModules
import XCTest

/// `ScriptLogLines`: the web view's bounded memory of each script's latest lines.
final class ScriptLogLinesTests: XCTestCase {
    func testKeepsTheNewestLinesOfEachScriptWithinItsBounds() {
        let lines = ScriptLogLines(perScript: 3, lineLimit: 20, scriptLimit: 2)
        for n in 1...5 { lines.append(script: "a.lua", "line \(n)") }
        XCTAssertEqual(lines.recent(script: "a.lua"), ["line 3", "line 4", "line 5"])
        XCTAssertEqual(lines.total(script: "a.lua"), 5)
        lines.append(script: "b.lua", "first\nsecond\n\nthird\nfourth")
        XCTAssertEqual(lines.recent(script: "b.lua"), ["second", "third", "fourth"], "split at newlines, empty lines dropped")
        lines.append(script: "b.lua", String(repeating: "x", count: 100))
        XCTAssertEqual(lines.recent(script: "b.lua").last, String(repeating: "x", count: 19) + "…")
        lines.append(script: "c.lua", "one script too many")
        XCTAssertEqual(lines.recent(script: "c.lua"), [], "no more scripts than scriptLimit")
        XCTAssertEqual(lines.recent(script: "unknown.lua"), [])
    }
}
