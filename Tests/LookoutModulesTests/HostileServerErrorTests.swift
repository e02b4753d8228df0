import Foundation
import HTTPTypes
import Hummingbird
import LookoutTestSupport
import Lua
import NightscoutKit
import NIOCore
import XCTest

@testable import LookoutConfig
@testable import LookoutModules
@testable import LookoutStore

/// Issue 24 §6, as scripts see it: a hostile server's texts reach `err` without the profile's
/// credentials, and a Signal K server that never finishes a message shows in `boat:state()`.
final class HostileServerErrorTests: XCTestCase {
    private let northlightKey = "nl_live_hostile0123456789abcdef"
    private let nightscoutSecret = "hostile site pass phrase"

    /// `/nl/…`: 400 echoing the `X-API-Key` in `field` and `message`; `/ns/…`: 400 whose text
    /// and JSON `message` echo the `api-secret` header.
    private func hostileServer() async throws -> HTTPTestServer {
        let router = Router()
        for method in [HTTPRequest.Method.get, .post, .put] {
            router.on("/nl/**", method: method) { request, _ -> Response in
                let key = request.headers[HTTPField.Name("X-API-Key")!] ?? ""
                let body = #"{"error":"validation_error","field":"\#(key)","message":"the key \#(key) is not welcome here"}"#
                return Response(status: .badRequest, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
            }
            router.on("/ns/**", method: method) { request, _ -> Response in
                let secret = request.headers[HTTPField.Name("api-secret")!] ?? ""
                let body = #"{"status":400,"message":"api-secret \#(secret) is not welcome here"}"#
                return Response(status: .badRequest, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
            }
        }
        return try await HTTPTestServer.start(router: router)
    }

    private func run(_ source: String, modules: [any LuaModule], file: StaticString = #filePath, line: UInt = #line) async throws -> [String] {
        let (transcript, outcome) = try await runLua(source, modules: modules)
        XCTAssertEqual(transcript.errors.map(\.description), [], file: file, line: line)
        XCTAssertEqual(outcome.exitCode, 0, file: file, line: line)
        return transcript.lines + transcript.warnings
    }

    /// Northlight echoing the API key in a 400's `field` and `message`: `err.field` and
    /// `err.message` carry the rest of the server's text, not the key.
    func testNorthlightEchoingTheKeyGetsItIntoNoErrField() async throws {
        let server = try await hostileServer()
        defer { Task { await server.stop() } }
        let config = try HostConfig(text: """
            [northlight.hostile]
            url = "http://127.0.0.1:\(server.port)/nl/api/v1"
            api_key_env = "NL_KEY"
            timeout = "5s"
            """)
        let lines = try await run("""
            local feedback = require 'feedback'
            local app = assert(feedback.client "hostile")
            local r, err = app:submit { title = "T", description = "D" }
            print(r, err.code, err.field, err.message, tostring(err))
            """, modules: [FeedbackModule(config: config, store: try StateStore(), environment: ["NL_KEY": northlightKey])])
        XCTAssertEqual(lines.count, 1, "\(lines)")
        XCTAssertTrue(lines[0].hasPrefix("nil\tinvalid_input\t"), lines[0])
        XCTAssertTrue(lines[0].contains("is not welcome here"), lines[0])
        XCTAssertFalse(lines[0].contains(northlightKey) || lines[0].contains("hostile0123456789"), lines[0])
    }

    /// A Nightscout site echoing the `api-secret` header (the secret's SHA-1, itself a credential)
    /// in a 400: `err.message` has neither it nor the secret.
    func testNightscoutEchoingTheAPISecretGetsItIntoNoError() async throws {
        let server = try await hostileServer()
        defer { Task { await server.stop() } }
        let config = try HostConfig(text: """
            [nightscout.hostile]
            url = "http://127.0.0.1:\(server.port)/ns"
            secret_env = "NS_SECRET"
            api = "v1"
            """)
        let lines = try await run("""
            local nightscout = require 'nightscout'
            local site = assert(nightscout.client "hostile")
            local docs, err = site:entries { last = "1h" }
            print(docs, err.code, err.message, tostring(err))
            """, modules: [NightscoutModule(config: config, store: try StateStore(), environment: ["NS_SECRET": nightscoutSecret])])
        XCTAssertEqual(lines.count, 1, "\(lines)")
        XCTAssertTrue(lines[0].contains("is not welcome here"), lines[0])
        let hash = NightscoutCredentials.sha1Hex(nightscoutSecret)
        XCTAssertFalse(lines[0].contains(hash) || lines[0].contains(nightscoutSecret), lines[0])
    }

    /// A Signal K server that begins a message and never finishes it: within the connection's
    /// `timeout`, `boat:state()` returns the error beside the state.
    func testASignalKMessageThatNeverFinishesShowsInBoatState() async throws {
        let server = try HostileWebSocketServer(fragment: 0)
        defer { server.stop() }
        let config = try HostConfig(text: "")
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-hostile-\(UUID())")
        let paths = LookoutPaths(configFile: home.appendingPathComponent("config.toml").path, stateDirectory: home.path)
        let lines = try await run("""
            local signalk = require 'signalk'
            local boat = assert(signalk.connect { url = "\(server.url.absoluteString)", timeout = "1s" })
            local state, err
            for _ = 1, 400 do
              state, err = boat:state()
              if err then break end
              sleep(0.05)
            end
            print(err and err.code, err and err.service, err and err.message:find("did not finish it within 1", 1, true) ~= nil)
            boat:close()
            """, modules: [SignalKModule(config: config, paths: paths, environment: [:])])
        XCTAssertEqual(lines, ["protocol\tsignalk\ttrue"])
    }
}
