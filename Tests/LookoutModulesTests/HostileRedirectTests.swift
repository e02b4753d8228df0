import Foundation
import LookoutTestSupport
import Lua
import XCTest

@testable import LookoutModules

/// Issue 24 §6: a server that redirects a script's request to another origin gets none of the
/// headers that can carry a credential; within one origin every header stays.
final class HostileRedirectTests: XCTestCase {
    private let headers = """
        { ["api-secret"] = "s3cret-api", ["X-API-Key"] = "s3cret-key", ["X-Nightscout-Pass"] = "s3cret-pass",
          ["Authorization"] = "Bearer s3cret-bearer", ["Cookie"] = "session=s3cret-cookie", ["X-Session"] = "s3cret-session",
          ["Accept"] = "application/json", ["Accept-Language"] = "de" }
        """

    private func run(_ source: String, file: StaticString = #filePath, line: UInt = #line) async throws -> [String] {
        let (transcript, outcome) = try await runLua("local http = require 'http'\n" + source, modules: [HTTPModule()])
        XCTAssertEqual(transcript.errors.map(\.description), [], file: file, line: line)
        XCTAssertEqual(outcome.exitCode, 0, file: file, line: line)
        return transcript.lines
    }

    /// `http.get` with the script's own credential headers, redirected (307) to another origin:
    /// the other origin sees only the descriptive headers (`Accept`, `Accept-Language`,
    /// `User-Agent`), none of the script's secrets.
    func testACrossOriginRedirectCarriesNoCredentialHeader() async throws {
        let attacker = try await CaptureServer.attacker(), redirector = try await CaptureServer.redirector()
        redirector.redirect("/hostile-cross", to: attacker.base + "/landed-cross")
        let lines = try await run("""
            local r, err = http.get("\(redirector.base)/hostile-cross/x", { headers = \(headers) })
            print(r and r.status, err and err.message)
            """)
        XCTAssertEqual(lines, ["200\tnil"])
        let arrived = try XCTUnwrap(attacker.requests("/landed-cross").first, "the redirect was followed")
        for request in attacker.requests("/landed-cross") {
            XCTAssertFalse(request.everything.contains("s3cret"), request.everything)
        }
        XCTAssertEqual(Set(arrived.headers.keys.map { $0.lowercased() }).intersection(["api-secret", "x-api-key", "x-nightscout-pass",
                                                                                   "authorization", "cookie", "x-session"]), [])
        XCTAssertEqual(arrived.headers.first { $0.key.lowercased() == "accept" }?.value, "application/json")
        XCTAssertEqual(arrived.headers.first { $0.key.lowercased() == "accept-language" }?.value, "de")
    }

    /// The case: the same port under another host name (`127.0.0.1:P` → `localhost:P`)
    /// is another origin too.
    func testARedirectToAnotherHostNameOnTheSamePortCarriesNoCredentialHeader() async throws {
        let redirector = try await CaptureServer.redirector()
        let port = try XCTUnwrap(URL(string: redirector.base)?.port)
        redirector.redirect("/hostile-host", to: "http://localhost:\(port)/landed-host")
        let lines = try await run("""
            local r, err = http.get("\(redirector.base)/hostile-host/x", { headers = \(headers) })
            print(r and r.status, err and err.message)
            """)
        XCTAssertEqual(lines, ["200\tnil"])
        let arrived = redirector.requests("/landed-host")
        XCTAssertEqual(arrived.count, 1, "the redirect was followed once")
        for request in arrived { XCTAssertFalse(request.everything.contains("s3cret"), request.everything) }
    }

    /// The same headers on a redirect within one origin all arrive: nothing to protect there.
    func testASameOriginRedirectKeepsEveryHeader() async throws {
        let redirector = try await CaptureServer.redirector()
        redirector.redirect("/hostile-same", to: redirector.base + "/landed-same")
        let lines = try await run("""
            local r, err = http.get("\(redirector.base)/hostile-same/x", { headers = \(headers) })
            print(r and r.status, err and err.message)
            """)
        XCTAssertEqual(lines, ["200\tnil"])
        let arrived = try XCTUnwrap(redirector.requests("/landed-same").first)
        for secret in ["s3cret-api", "s3cret-key", "s3cret-pass", "s3cret-bearer", "s3cret-cookie", "s3cret-session"] {
            XCTAssertTrue(arrived.everything.contains(secret), "\(secret) missing in \(arrived.everything)")
        }
    }
}
