import Lua
import LookoutTestSupport
import XCTest

final class UserdataTests: XCTestCase {
    func testHostObjectsHaveNameTostringCloseAndProtectedMetatable() async throws {
        let (t, _) = try await runLua("""
            local kit = require "testkit"
            do
              local p <close> = kit.probe("a")
              print(tostring(p), p:name(), getmetatable(p))
              print(pcall(setmetatable, p, {}))
            end
            local ok, err = pcall(function() return kit.probe("b").name() end)
            print(ok, err)
            print(pcall(kit.probe("c").name, 42))
            """, modules: [TestKitModule()])
        XCTAssertEqual(t.lines.count, 5, "\(t.lines)")
        XCTAssertEqual(t.lines[0], "probe a\ta\tfalse")
        XCTAssertTrue(t.lines[1].hasPrefix("false\t"), t.lines[1])
        XCTAssertEqual(t.lines[2], "closed a")
        XCTAssertTrue(t.lines[3].contains("bad self to 'probe:name' (probe expected, got no value); call it with ':'"), t.lines[3])
        XCTAssertTrue(t.lines[4].contains("probe expected, got number"), t.lines[4])
    }

    func testGarbageCollectionReleasesSwiftObjects() async throws {
        let before = Probe.live.value
        let (t, _) = try await runLua("""
            local kit = require "testkit"
            for i = 1, 100 do kit.probe("p" .. i) end
            local kept = kit.probe("kept")
            collectgarbage(); collectgarbage()
            print(kit.live_probes())
            """, modules: [TestKitModule()])
        XCTAssertEqual(t.lines, ["\(before + 1)"])
        XCTAssertEqual(Probe.live.value, before, "closing the state releases the rest")
    }
}
