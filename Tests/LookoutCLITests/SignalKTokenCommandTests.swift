import Foundation
import LookoutSim
import LookoutWire
import XCTest

/// `lookout signalk token request|state PROFILE` against the secured Signal K simulator over real
/// HTTP: the request is sent, the administrator approves it, the token lands 0600 in the state's
/// token directory and is never printed.
final class SignalKTokenCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulator is only used from the test's own task.
    func testTokenRequestWaitsForApprovalAndStoresTheToken() async throws {
        let box = Locked<SignalKSimulator?>(nil)
        let sim = try SignalKSimulator(options: .init(
            autoTick: false, security: true, users: ["admin": "secret"],
            onAccessRequest: { notice in
                guard let sim = box.withLock({ $0 }), notice.description == "approve the CLI" else { return }
                Task { await sim.approveAccessRequest(clientId: notice.clientId, permissions: "readwrite") }
            }))
        box.withLock { $0 = sim }
        let base = try await sim.start()
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try """
            [signalk.boat]
            url = "\(base.absoluteString)"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let before = try lookout(["signalk", "token", "state", "boat"])
        assertExit(before, 0)
        XCTAssertEqual(before.stdout, "none\n")

        let run = try lookout(["signalk", "token", "request", "boat", "--description", "approve the CLI", "--wait", "30s"])
        assertExit(run, 0)
        XCTAssertTrue(run.stdout.contains("lookout sim signalk approve "), run.stdout)
        XCTAssertTrue(run.stdout.contains("approved: token stored in"), run.stdout)
        let file = home + "/state/tokens/signalk-profile-boat_127.0.0.1_\(sim.port).json"
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        let stored = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: file)))
        let token = try XCTUnwrap(stored["token"]?.stringValue)
        XCTAssertFalse(run.stdout.contains(token) || run.stderr.contains(token))

        let after = try lookout(["signalk", "token", "state", "boat"])
        XCTAssertEqual(after.stdout, "valid\n")
        // A script of the profile uses the stored token: REST reads work on the secured server.
        let script = try runScript("""
            local signalk = require "signalk"
            local boat = assert(signalk.connect "boat")
            print(boat:token_state(), type(boat:get("navigation.speedOverGround")))
            boat:close()
            """)
        assertExit(script, 0)
        XCTAssertEqual(script.stdout, "valid\tnumber\n")
        // The simulator is left running: stopping Hummingbird while a connection arrives can trap in NIO.
    }
}
