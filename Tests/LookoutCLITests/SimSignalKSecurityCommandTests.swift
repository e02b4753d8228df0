import Foundation
import XCTest

/// `lookout sim signalk --security`: the access-request flow from two terminals, as README shows it.
final class SimSignalKSecurityCommandTests: CLITestCase, @unchecked Sendable {
    func testAccessRequestApprovedFromAnotherTerminal() throws {
        let sim = try launch(["sim", "signalk", "--security", "--user", "admin:sim-admin-pw", "--user", "crew:crew-pw:readonly"])
        sim.closeInput()
        guard sim.waitForOutput(containing: "serving until Ctrl-C\n") else { return }
        let out = sim.output()
        XCTAssertTrue(out.contains("security on: users admin (admin), crew (readonly)"), out)
        XCTAssertFalse(out.contains("sim-admin-pw"), "passwords are never printed")
        let base = try XCTUnwrap(out.split(separator: "\n").first?.components(separatedBy: " at ").last?
            .replacingOccurrences(of: "/signalk", with: ""))

        // Terminal 2, the device: asks for access.
        let clientId = UUID().uuidString.lowercased()
        let ask = try runScript("""
            local http = require "http"
            local r = assert(http.post(arg[1] .. "/signalk/v1/access/requests",
                { json = { clientId = arg[2], description = "Helm iPad", permissions = "readwrite" } }))
            print(r.status, r.json.state, r.json.href)
            """, arguments: [base, clientId])
        assertExit(ask, 0)
        let fields = ask.stdout.trimmingCharacters(in: .newlines).split(separator: "\t").map(String.init)
        XCTAssertEqual(Array(fields.prefix(2)), ["202", "PENDING"], ask.stdout)
        let href = try XCTUnwrap(fields.last)

        // Terminal 1 shows it with the command to approve it.
        guard sim.waitForOutput(containing: "approve: lookout sim signalk approve \(clientId) --url \(base) --admin admin:PASSWORD")
        else { return }
        XCTAssertTrue(sim.output().contains("\"Helm iPad\" (clientId \(clientId), asks for readwrite)"), sim.output())

        let wrong = try lookout(["sim", "signalk", "approve", clientId, "--url", base, "--admin", "admin:nope"])
        XCTAssertNotEqual(wrong.exitCode, 0)
        XCTAssertTrue(wrong.stderr.contains("cannot log in"), wrong.description)
        let approve = try lookout(["sim", "signalk", "approve", clientId, "--url", base, "--admin", "admin:sim-admin-pw", "--expiration", "30d"])
        assertExit(approve, 0)
        XCTAssertEqual(approve.stdout, "approved \(clientId): Request updated\n")

        // The device polls its href and reads with its token.
        let read = try runScript("""
            local http = require "http"
            local p = assert(http.get(arg[1] .. arg[2]))
            print(p.json.accessRequest.permission)
            local r = assert(http.get(arg[1] .. "/signalk/v1/api/self", { headers = { Authorization = "Bearer " .. p.json.accessRequest.token } }))
            print(r.status)
            """, arguments: [base, href])
        assertExit(read, 0)
        XCTAssertEqual(read.stdout, "APPROVED\n200\n")

        // A hostile device cannot write terminal escapes into the simulator's output.
        let hostile = try runScript("""
            local http = require "http"
            local r = assert(http.post(arg[1] .. "/signalk/v1/access/requests",
                { json = { clientId = "evil-\\27", description = "\\27[2J\\27]0;pwned\\7Helm\\nfake line" } }))
            print(r.status)
            """, arguments: [base])
        assertExit(hostile, 0)
        guard sim.waitForOutput(containing: "Helmfake line\" (clientId evil-") else { return }
        XCTAssertFalse(sim.output().contains("\u{1B}"), "no escape character reaches the terminal")

        let again = try lookout(["sim", "signalk", "deny", clientId, "--url", base, "--admin", "admin:sim-admin-pw"])
        XCTAssertNotEqual(again.exitCode, 0, "no longer pending")
        XCTAssertTrue(again.stderr.contains("HTTP 500"), again.description)

        sim.send(signal: SIGINT)
        let ended = try XCTUnwrap(sim.waitForExit(timeout: 20))
        assertExit(ended, 0)
    }

    func testUserWithoutSecurityAndBadRolesAreUsageErrors() throws {
        let noSecurity = try lookout(["sim", "signalk", "--user", "admin:pw"])
        assertExit(noSecurity, 2)
        XCTAssertTrue(noSecurity.stderr.contains("--user and --allow-readonly need --security"), noSecurity.stderr)
        let badRole = try lookout(["sim", "signalk", "--security", "--user", "admin:pw:captain"])
        assertExit(badRole, 2)
        XCTAssertTrue(badRole.stderr.contains("role must be readonly, readwrite or admin"), badRole.stderr)
    }
}
