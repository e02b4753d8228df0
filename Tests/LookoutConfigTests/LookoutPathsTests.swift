import Foundation
import XCTest

@testable import LookoutConfig

final class LookoutPathsTests: XCTestCase {
    func testLookoutHome() {
        let paths = LookoutPaths.resolve(environment: [
            "LOOKOUT_HOME": "/tmp/lh/", "HOME": "/home/me", "XDG_CONFIG_HOME": "/x",
        ])
        XCTAssertEqual(paths.configFile, "/tmp/lh/config.toml")
        XCTAssertEqual(paths.configDirectory, "/tmp/lh")
        XCTAssertEqual(paths.stateDirectory, "/tmp/lh/state")
        XCTAssertEqual(paths.historyFile, "/tmp/lh/state/history")
        XCTAssertEqual(paths.databaseFile, "/tmp/lh/state/lookout.sqlite3")
        XCTAssertEqual(paths.tokensDirectory, "/tmp/lh/state/tokens")
    }

    func testRelativeLookoutHomeIsMadeAbsolute() {
        let paths = LookoutPaths.resolve(environment: ["LOOKOUT_HOME": "work"])
        XCTAssertEqual(paths.configFile, FileManager.default.currentDirectoryPath + "/work/config.toml")
    }

    func testDefaultsUnderHome() {
        let paths = LookoutPaths.resolve(environment: ["HOME": "/home/me", "LOOKOUT_HOME": ""])
        XCTAssertEqual(paths.configFile, "/home/me/.config/lookout/config.toml")
        XCTAssertEqual(paths.stateDirectory, "/home/me/.local/state/lookout")
    }

    func testXDGDirectories() {
        let paths = LookoutPaths.resolve(
            environment: ["HOME": "/home/me", "XDG_CONFIG_HOME": "/cfg", "XDG_STATE_HOME": "/st/"])
        XCTAssertEqual(paths.configFile, "/cfg/lookout/config.toml")
        XCTAssertEqual(paths.stateDirectory, "/st/lookout")
        let relative = LookoutPaths.resolve(
            environment: ["HOME": "/home/me", "XDG_CONFIG_HOME": "cfg", "XDG_STATE_HOME": ""])
        XCTAssertEqual(relative.configFile, "/home/me/.config/lookout/config.toml")
        XCTAssertEqual(relative.stateDirectory, "/home/me/.local/state/lookout")
    }

    func testTildeExpansion() {
        XCTAssertEqual(LookoutPaths.expandTilde("~/a", environment: ["HOME": "/h/"]), "/h/a")
        XCTAssertEqual(LookoutPaths.expandTilde("~", environment: ["HOME": "/h"]), "/h")
        XCTAssertEqual(LookoutPaths.expandTilde("/abs/~/x", environment: ["HOME": "/h"]), "/abs/~/x")
        XCTAssertEqual(LookoutPaths.expandTilde("~other/x", environment: ["HOME": "/h"]), "~other/x")
    }

    func testCreatesPrivateDirectories() throws {
        let base = try configTestTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let paths = LookoutPaths.resolve(environment: ["LOOKOUT_HOME": base + "/nested/home"])
        XCTAssertEqual(try paths.createStateDirectory(), base + "/nested/home/state")
        XCTAssertEqual(try mode(paths.stateDirectory), 0o700)
        // An existing state directory is left alone.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: paths.stateDirectory)
        try paths.createStateDirectory()
        XCTAssertEqual(try mode(paths.stateDirectory), 0o755)

        XCTAssertEqual(try paths.createTokensDirectory(), paths.tokensDirectory)
        XCTAssertEqual(try mode(paths.tokensDirectory), 0o700)
        // The tokens directory is tightened if it was opened up.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: paths.tokensDirectory)
        try paths.createTokensDirectory()
        XCTAssertEqual(try mode(paths.tokensDirectory), 0o700)
    }

    func testStateDirectoryThatIsAFile() throws {
        let base = try configTestTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        XCTAssertTrue(FileManager.default.createFile(atPath: base + "/state", contents: Data()))
        let paths = LookoutPaths.resolve(environment: ["LOOKOUT_HOME": base])
        XCTAssertThrowsError(try paths.createStateDirectory()) { error in
            XCTAssertEqual("\(error)", "\(base)/state: exists but is not a directory")
        }
    }

    private func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? Int ?? -1) & 0o777
    }
}
