import Foundation
import LookoutSim
import LookoutTestSupport
import Lua
import SignalKKit
import XCTest

@testable import LookoutConfig
@testable import LookoutModules
import LookoutWire

/// Secured simulators whose administrator decides by the request's description: "approve…" is
/// approved (`readwrite`), "deny…" denied, anything else stays pending. `strict` refuses
/// anonymous clients; `readable` lets them read (never stopped, one each for the process).
actor SignalKAccessSims {
    static let shared = SignalKAccessSims()
    private var started: [Bool: SignalKSimulator] = [:]

    func sim(readOnly: Bool) async throws -> SignalKSimulator {
        if let s = started[readOnly] { return s }
        let box = Locked<SignalKSimulator?>(nil)
        let sim = try SignalKSimulator(options: .init(
            rate: 10, seed: 9, autoTick: false,
            putHandlers: ["electrical.switches.anchorLight.state": { _ in .completed() }],
            security: true, users: ["admin": "secret"], allowReadOnly: readOnly,
            onAccessRequest: { notice in
                guard let sim = box.withLock({ $0 }) else { return }
                Task {
                    if notice.description.hasPrefix("approve-expiring") {
                        await sim.approveAccessRequest(clientId: notice.clientId, permissions: "readwrite", expiresIn: 8)
                    } else if notice.description.hasPrefix("approve") {
                        await sim.approveAccessRequest(clientId: notice.clientId, permissions: "readwrite")
                    } else if notice.description.hasPrefix("deny") {
                        await sim.denyAccessRequest(clientId: notice.clientId)
                    }
                }
            }))
        box.withLock { $0 = sim }
        _ = try await sim.start()
        started[readOnly] = sim
        return sim
    }
}

/// `skadmin.revoke(profile)`: the simulator's administrator revokes the device token stored for
/// the profile (the clientId is read from the profile's token file).
struct SignalKAdminControlModule: LuaModule {
    let name = "skadmin"
    let stub = "---@meta skadmin\n"
    let sim: SignalKSimulator
    let tokens: URL

    func push(into engine: LuaEngine, stack: LuaStack) throws {
        let sim = self.sim, tokens = self.tokens
        let server = URL(string: "http://127.0.0.1:\(sim.port)")!
        engine.pushLibrary([
            "revoke": { call in
                let profile = try call.string(1)
                return try call.wait("revoke", {
                    let store = SignalKTokenStore(directory: tokens, host: SignalKProfileAccess.storeKey(profile: profile, server: server))
                    return await sim.revokeDevice(clientId: try await store.clientId())
                }) { stack, ok in
                    stack.push(ok)
                    return 1
                }
            },
        ], prefix: "skadmin.", on: stack)
    }
}

/// Signal K access from scripts against the secured simulator over real HTTP and WebSocket:
/// a missing token fails `connect` early, `boat:request_access` gets and stores a token the
/// script never sees, `boat:token_state()` follows it, and a revoked token is requested again
/// with the profile's opt-in (a clear `auth` error without it).
final class SignalKAccessTests: XCTestCase {
    private var home: URL!

    override func setUp() async throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-skaccess-\(UUID())")
    }

    private var tokens: URL { home.appendingPathComponent("tokens") }

    /// Runs `source` with profiles `open` (no opt-in) and `auto` (opt-in, approved) on `sim`.
    private func run(_ source: String, sim: SignalKSimulator, file: StaticString = #filePath, line: UInt = #line)
        async throws -> [String]
    {
        let base = "http://127.0.0.1:\(sim.port)"
        let config = try HostConfig(text: """
            [signalk.open]
            url = "\(base)"
            [signalk.auto]
            url = "\(base)"
            access = {description = "approve lookout tests", wait = "20s", permissions = "readwrite"}
            [signalk.expiring]
            url = "\(base)"
            access = {description = "approve-expiring lookout tests", wait = "20s", permissions = "readwrite"}
            [signalk.never]
            url = "\(base)"
            access = {description = "deny lookout tests", wait = "20s"}
            """)
        try ServiceProfileSchema.validate(config)
        let paths = LookoutPaths(configFile: home.appendingPathComponent("config.toml").path, stateDirectory: home.path)
        let (transcript, outcome) = try await runLua(
            "local signalk = require 'signalk'\nlocal skadmin = require 'skadmin'\n" + source,
            modules: [SignalKModule(config: config, paths: paths, environment: [:]),
                      SignalKAdminControlModule(sim: sim, tokens: tokens)])
        XCTAssertEqual(transcript.errors.map(\.description), [], file: file, line: line)
        XCTAssertEqual(outcome.exitCode, 0, file: file, line: line)
        return transcript.lines
    }

    private func server(_ sim: SignalKSimulator) -> URL { URL(string: "http://127.0.0.1:\(sim.port)")! }

    /// The token stored for `profile` (read by the test, never by the script).
    private func storedToken(_ profile: String, _ sim: SignalKSimulator) async throws -> String? {
        let store = SignalKTokenStore(directory: tokens, host: SignalKProfileAccess.storeKey(profile: profile, server: server(sim)))
        return try await store.load().token
    }

    func testNoTokenOnASecuredServerFailsConnectWithHowToGetOne() async throws {
        let sim = try await SignalKAccessSims.shared.sim(readOnly: false)
        let lines = try await run("""
            local boat, err = signalk.connect "open"
            print(boat, err.code, err.status)
            print(err.message)
            local byurl, err2 = signalk.connect { url = "http://127.0.0.1:\(sim.port)" }
            print(byurl, err2.code, err2.message:find("pass token", 1, true) ~= nil)
            """, sim: sim)
        XCTAssertEqual(lines.count, 3)
        XCTAssertEqual(lines.first, "nil\tauth\t401")
        XCTAssertTrue(lines.dropFirst().first?.contains("lookout signalk token request open") == true, lines.joined(separator: "\n"))
        XCTAssertEqual(lines.last, "nil\tauth\ttrue")
    }

    func testRequestAccessStoresATokenTheScriptNeverSees() async throws {
        let sim = try await SignalKAccessSims.shared.sim(readOnly: true)
        let lines = try await run("""
            local boat = assert(signalk.connect "open")
            print(boat:token_state())
            local r, err = boat:put("electrical.switches.anchorLight.state", 1)
            print(r, err.code)
            print(boat:request_access { description = "approve me", permissions = "readwrite", wait = "20s" })
            print(boat:token_state())
            print(assert(boat:put("electrical.switches.anchorLight.state", 1)).statusCode)
            print(pcall(boat.request_access, boat, { description = "approve", permissions = "admin" }))
            -- revoked by the administrator: without the profile's opt-in, a clear error
            print(skadmin.revoke "open")
            local r2, err2 = boat:put("electrical.switches.anchorLight.state", 1)
            print(r2, err2.code, err2.message:find("lookout signalk token request open", 1, true) ~= nil)
            print(boat:token_state())
            """, sim: sim)
        guard lines.count == 9 else { return XCTFail(lines.joined(separator: "\n")) }
        XCTAssertEqual(Array(lines.prefix(2)), ["none", "nil\tauth"])
        XCTAssertEqual(Array(lines.dropFirst(2).prefix(3)), ["valid", "valid", "200"])
        XCTAssertTrue(lines[5].contains("opts.permissions: expected \"readonly\" or \"readwrite\""), lines[5])
        XCTAssertEqual(Array(lines.suffix(3)), ["true", "nil\tauth\ttrue", "expired"])
        // The token was stored 0600 and deleted once refused; it never reached the script's output.
        let file = SignalKTokenStore(directory: tokens, host: SignalKProfileAccess.storeKey(profile: "open", server: server(sim))).fileURL
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        let token = try await storedToken("open", sim)
        XCTAssertNil(token)
        XCTAssertFalse(lines.joined().contains("eyJ"), lines.joined(separator: "\n"))
    }

    func testDeniedStopsRequestsUntilAPersonAsks() async throws {
        let sim = try await SignalKAccessSims.shared.sim(readOnly: true)
        let lines = try await run("""
            local boat = assert(signalk.connect "open")
            print(boat:request_access { description = "deny me", wait = "20s" })
            print(boat:token_state())
            local s, err = boat:request_access { description = "approve me now", wait = "1s" }
            print(s, err.code, err.message:find("denied", 1, true) ~= nil)
            """, sim: sim)
        XCTAssertEqual(lines, ["denied", "denied", "nil\tauth\ttrue"])
        let pending = await sim.pendingAccessRequests()
        let clientId = try await SignalKTokenStore(directory: tokens, host: SignalKProfileAccess.storeKey(profile: "open", server: server(sim))).clientId()
        XCTAssertFalse(pending.contains(clientId))
    }

    func testPendingRequestIsSentOnceAndURLConnectionsHaveNone() async throws {
        let sim = try await SignalKAccessSims.shared.sim(readOnly: true)
        let before = await sim.accessRequestsReceived()
        let lines = try await run("""
            local boat = assert(signalk.connect "open")
            print(boat:request_access { description = "wait for the skipper", wait = 0 })
            print(boat:request_access { description = "wait for the skipper", wait = 0 })
            print(boat:token_state())
            local byurl = assert(signalk.connect { url = "http://127.0.0.1:\(sim.port)" })
            local s, err = byurl:request_access { description = "approve me" }
            print(s, err.code, byurl:token_state())
            """, sim: sim)
        XCTAssertEqual(lines, ["pending", "pending", "pending", "nil\tconfig\tnone"])
        let clientId = try await SignalKTokenStore(directory: tokens, host: SignalKProfileAccess.storeKey(profile: "open", server: server(sim))).clientId()
        let deadline = Date().addingTimeInterval(10)
        while await !sim.pendingAccessRequests().contains(clientId), Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let pending = await sim.pendingAccessRequests()
        XCTAssertEqual(pending.filter { $0 == clientId }.count, 1)
        await sim.denyAccessRequest(clientId: clientId)
        let after = await sim.accessRequestsReceived()
        XCTAssertEqual(after - before, 1, "one request sent for the profile, then polled")
    }

    /// The server's `href` cannot lead the polling (and the token it brings) to another host.
    func testAccessRequestsStayOnTheProfilesServer() async throws {
        let sim = try await SignalKAccessSims.shared.sim(readOnly: true)
        let server = try XCTUnwrap(URL(string: "http://127.0.0.1:\(sim.port)"))
        let transport = SignalKSameServerTransport(server: server)
        for elsewhere in ["http://127.0.0.2:\(sim.port)/signalk/v1/requests/x", "https://127.0.0.1:\(sim.port)/signalk/v1/requests/x",
                          "http://127.0.0.1:1/signalk/v1/requests/x"] {
            do {
                _ = try await transport.send(SignalKHTTPRequest(method: "GET", url: URL(string: elsewhere)!), timeout: .seconds(2))
                XCTFail("sent to \(elsewhere)")
            } catch SignalKClientError.invalidURL(let why) {
                XCTAssertTrue(why.contains("leads off the server"), why)
            }
        }
        let home = try await transport.send(
            SignalKHTTPRequest(method: "GET", url: server.appendingPathComponent("signalk")), timeout: .seconds(5))
        XCTAssertEqual(home.status, 200)
    }

    /// A token past its `exp` is seen as expired (no request with it), and with the opt-in the
    /// next call requests a new one.
    func testExpiredTokenIsRequestedAgainWithTheOptIn() async throws {
        let sim = try await SignalKAccessSims.shared.sim(readOnly: false)
        let lines = try await run("""
            local boat = assert(signalk.connect "expiring")
            print(boat:token_state())
            for _ = 1, 600 do
              if boat:token_state() == "expired" then break end
              require("script").sleep(0.05)
            end
            print(boat:token_state())
            print(assert(boat:put("electrical.switches.anchorLight.state", 1)).statusCode)
            """, sim: sim)
        XCTAssertEqual(lines, ["valid", "expired", "200"])
    }

    func testOptInRequestsAtConnectAndAgainAfterRevocation() async throws {
        let sim = try await SignalKAccessSims.shared.sim(readOnly: false)
        let lines = try await run("""
            local boat = assert(signalk.connect "auto")
            print(boat:state(), boat:token_state())
            print(assert(boat:put("electrical.switches.anchorLight.state", 1)).statusCode)
            print(skadmin.revoke "auto")
            print(assert(boat:put("electrical.switches.anchorLight.state", 0)).statusCode)
            print(boat:token_state())
            """, sim: sim)
        XCTAssertEqual(lines, ["connected\tvalid", "200", "true", "200", "valid"])
        let token = try await storedToken("auto", sim)
        XCTAssertNotNil(token)
    }
}
