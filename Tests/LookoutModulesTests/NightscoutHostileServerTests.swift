import Foundation
import HTTPTypes
import Hummingbird
import LookoutTestSupport
import LookoutWire
import NIOCore
import XCTest

@testable import LookoutConfig
@testable import LookoutModules
@testable import LookoutStore

/// A site answering non-finite and out-of-range numbers (`"sgv": 1e999`, `-1e999`, a `date` of
/// 2^64): no such document reaches a script as a reading, in any reader (v1 and v3 lists,
/// `search`, `history`, `read`, `latest`); lists drop them with a warning that counts them and
/// says why, one document is `nil, err`.
final class NightscoutHostileServerTests: XCTestCase {
    static let documents = """
        {"type":"sgv","sgv":1e999,"date":1714557600000,"identifier":"a","srvModified":1714557600001},
        {"type":"sgv","sgv":-1e999,"date":1714557300000,"identifier":"b","srvModified":1714557600002},
        {"type":"sgv","sgv":100,"date":18446744073709551616,"identifier":"c","srvModified":1714557600003},
        {"type":"sgv","sgv":101,"date":1714557000000,"identifier":"d","srvModified":1714557600004}
        """
    /// An unsigned JWT of a subject `me`, expiring in 2100.
    static let jwt = "eyJhbGciOiJIUzI1NiJ9." + Data(#"{"accessToken":"me-0123456789abcdef","iat":1714557600,"exp":4102444800}"#.utf8)
        .base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_") + ".c2ln"

    static func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.on("**", method: .get) { request, _ -> Response in
            let path = request.uri.path
            let body: String
            if path == "/api/v3/version" {
                body = #"{"status":200,"result":{"version":"15.0.7","apiVersion":"3.0.3-alpha","srvDate":1714557600000}}"#
            } else if path.hasPrefix("/api/v2/authorization/request/") {
                body = #"{"token":"\#(jwt)","sub":"me","permissionGroups":[["*"]],"iat":1714557600,"exp":4102444800}"#
            } else if path.hasPrefix("/api/v3/entries/history") {
                body = #"{"status":200,"result":[\#(documents)]}"#
            } else if path.hasPrefix("/api/v3/entries/") {
                body = #"{"status":200,"result":{"type":"sgv","sgv":-1e999,"date":1714557600000,"identifier":"x"}}"#
            } else if path.hasPrefix("/api/v3/entries") {
                body = #"{"status":200,"result":[\#(documents)]}"#
            } else if path.hasPrefix("/api/v1/entries") {
                body = "[\(documents)]"
            } else {
                return Response(status: .notFound)
            }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        return router
    }

    func testNonFiniteAndOutOfRangeValuesNeverReachScriptsAsReadings() async throws {
        let server = try await HTTPTestServer.start(router: Self.router())
        let url = "http://127.0.0.1:\(server.port)"
        let store = try StateStore()
        let config = try HostConfig(text: "")
        let (transcript, outcome) = try await runLua("""
            local nightscout = require 'nightscout'
            local open = assert(nightscout.connect { url = "\(url)" })
            local v3 = assert(nightscout.connect { url = "\(url)", token = "me-0123456789abcdef" })
            print(open:api(), v3:api())
            for _, c in ipairs { open, v3 } do
              local list = assert(c:entries { last = "1h" })
              print(#list, list[1].sgv, list[1].identifier)
              local found = assert(c:search("entries", { count = 10 }))
              print(#found, found[1].sgv)
            end
            local n = 0
            for doc in v3:history("entries") do n = n + 1; print("history", doc.identifier, doc.sgv) end
            print("history count", n)
            local doc, err = v3:read("entries", "x")
            print(doc, err.code, err.message)
            local bg, lerr = v3:latest()
            print(bg, lerr and lerr.code)
            """, modules: [NightscoutModule(config: config, store: store, environment: [:])])
        await server.stop()
        XCTAssertEqual(transcript.errors.map(\.description), [])
        XCTAssertEqual(outcome.exitCode, 0)
        XCTAssertEqual(transcript.lines, [
            "v1\tv3",
            "1\t101\td", "1\t101",
            "1\t101\td", "1\t101",
            "history\td\t101", "history count\t1",
            "nil\tinvalid_response\tthe server's entries document is unusable: sgv is not a finite number (-inf)",
            "nil\tinvalid_response",
        ])
        let dropped = transcript.warnings.filter { $0.hasPrefix("nightscout: dropped 3 of 4 entries documents the server sent: ") }
        XCTAssertEqual(dropped.count, 5, "\(transcript.warnings)")
        XCTAssertTrue(dropped.allSatisfy { $0.contains("sgv is not a finite number (inf) (the first)") }, "\(dropped)")
    }

    /// A client with a token against a server without API v3 (404 on `/api/v3/version`) falls
    /// back to v1; what needs v3 says the server lacks it, not that the token should be one.
    func testAfterFallingBackToV1TheErrorSaysTheServerLacksAPIv3() async throws {
        let router = Router()
        router.on("**", method: .get) { request, _ -> Response in
            guard request.uri.path.hasPrefix("/api/v1/") else { return Response(status: .notFound) }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "[]")))
        }
        let server = try await HTTPTestServer.start(router: router)
        let (transcript, outcome) = try await runLua("""
            local nightscout = require 'nightscout'
            local old = assert(nightscout.connect { url = "http://127.0.0.1:\(server.port)", token = "me-0123456789abcdef" })
            print(old:api())
            local doc, err = old:read("entries", "x")
            print(doc, err.code, err.message)
            """, modules: [NightscoutModule(config: try HostConfig(text: ""), store: try StateStore(), environment: [:])])
        await server.stop()
        XCTAssertEqual(transcript.errors.map(\.description), [])
        XCTAssertEqual(outcome.exitCode, 0)
        XCTAssertEqual(transcript.lines, [
            "v1",
            "nil\tunsupported\tread needs API v3: this server has no API v3 (it answered 404 to /api/v3/version: a Nightscout older than 14)",
        ])
    }
}
