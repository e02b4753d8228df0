import Foundation
import LookoutSim
import LookoutTestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

@testable import LookoutModules

/// Issue 24 §5: the `http` module refuses every path Nightscout's server would route to a remote
/// command, as an invariant over a generated corpus of spellings (case, percent escapes of any
/// character, format extensions, dot segments, trailing and duplicate slashes, extra segments, a
/// path prefix). Each spelling is sent raw to the simulator (which routes as Nightscout's Express
/// does: case-insensitive, format extensions); every one that reaches a remote-command handler
/// there must be refused by the `http` module, on the first request and behind a 307 redirect,
/// and nothing the `http` module sends reaches a handler.
final class RemoteCommandPathCorpusTests: XCTestCase {
    /// The corpus's seed: the same spellings on every run.
    static let seed: UInt64 = 0x24_05

    /// A deterministic generator (SplitMix64).
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// One spelling: the method it is sent with and the path (as on the wire).
    struct Spelling: Hashable, Sendable {
        var method: String
        var path: String
    }

    /// `count` spellings of the remote-command endpoints and of near misses, from `seed`.
    static func corpus(count: Int, seed: UInt64 = seed) -> [Spelling] {
        var rng = SeededGenerator(state: seed)
        let bases: [(String, [String])] = [
            ("POST", ["api", "v2", "notifications", "loop"]),
            ("POST", ["api", "v2", "remotecommands"]),
            ("GET", ["api", "v2", "remotecommands"]),
            ("PUT", ["api", "v2", "remotecommands", "0123abc"]),
            // Near misses, so the corpus has spellings no handler gets.
            ("POST", ["api", "v2", "notifications", "loops"]),
            ("POST", ["api", "v2", "remotecommand"]),
            ("POST", ["api", "v1", "notifications", "loop"]),
        ]
        var seen = Set<Spelling>()
        var out: [Spelling] = []
        while out.count < count {
            let (method, base) = bases[Int.random(in: 0..<bases.count, using: &rng)]
            var segments = base
            for _ in 0..<Int.random(in: 1...4, using: &rng) { mutate(&segments, &rng) }
            var path = "/" + segments.joined(separator: "/")
            if Bool.random(using: &rng), Int.random(in: 0..<4, using: &rng) == 0 { path += "/" }
            let spelling = Spelling(method: method, path: path)
            if seen.insert(spelling).inserted { out.append(spelling) }
        }
        return out
    }

    /// Applies one random change to the segments (each keeps the path a valid URL path).
    static func mutate(_ segments: inout [String], _ rng: inout SeededGenerator) {
        let i = Int.random(in: 0..<segments.count, using: &rng)
        switch Int.random(in: 0..<9, using: &rng) {
        case 0:  // case
            segments[i] = String(segments[i].map { Bool.random(using: &rng) ? Character($0.uppercased()) : $0 })
        case 1, 2:  // percent-encode characters (some twice)
            segments[i] = segments[i].map { c -> String in
                guard Int.random(in: 0..<3, using: &rng) == 0 else { return String(c) }
                let hex = String(format: "%%%02X", c.asciiValue ?? 0x3F)
                return Int.random(in: 0..<4, using: &rng) == 0 ? hex.replacingOccurrences(of: "%", with: "%25") : hex
            }.joined()
        case 3:  // format extension
            segments[i] += [".json", ".csv", ".txt", ".tsv", ".JSON", "%2Ejson"][Int.random(in: 0..<6, using: &rng)]
        case 4:  // dot segments
            segments.insert(["."  , "x/..", "%2e", "./."][Int.random(in: 0..<4, using: &rng)], at: i)
        case 5:  // duplicate slash
            segments.insert("", at: i + 1 == segments.count ? i : i + 1)
        case 6:  // extra segment at the end
            segments.append(["abc", "x.json", "1"][Int.random(in: 0..<3, using: &rng)])
        case 7:  // a prefix (a site below a path)
            if i == 0 { segments.insert("ns", at: 0) } else { segments[i] = segments[i].uppercased() }
        default:  // trailing slash
            segments.append("")
        }
    }

    /// One request as written, on a fresh connection (no client normalises the path), and the
    /// status line's code (0 when nothing came back).
    static func rawRequest(port: Int, _ spelling: Spelling) -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return 0 }
        let body = spelling.method == "GET" ? "" : "{}"
        let request = "\(spelling.method) \(spelling.path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 12 else { return 0 }
        return Int(String(decoding: buffer[9..<12], as: UTF8.self)) ?? 0
    }

    func testEverySpellingTheSimulatorRoutesToARemoteCommandIsRefusedByTheHTTPModule() async throws {
        let sim = NightscoutSimulator(options: .init(authFailDelay: .zero))
        let url = try await sim.start()
        defer { Task { await sim.stop() } }
        let port = try XCTUnwrap(url.port)
        let corpus = Self.corpus(count: 600)
        XCTAssertEqual(corpus, Self.corpus(count: 600), "the corpus is the same on every run")

        // 1. Which spellings does the simulator route to a remote-command handler?
        var routed: [Spelling] = []
        for spelling in corpus {
            let before = await sim.remoteCommandRouteHits().count
            let one = spelling
            let status = await Task.detached { RemoteCommandPathCorpusTests.rawRequest(port: port, one) }.value
            XCTAssertNotEqual(status, 0, "no answer to \(spelling)")
            if await sim.remoteCommandRouteHits().count > before { routed.append(spelling) }
        }
        // The corpus exercises every rule: spellings other than the plain ones get through.
        XCTAssertGreaterThan(routed.count, 50, "routed: \(routed.count) of \(corpus.count)")
        XCTAssertLessThan(routed.count, corpus.count)
        // (Like Express, the simulator does not resolve dot segments; the http module refuses them anyway.)
        for rule in ["%", ".json", "//", "abc"] {
            XCTAssertTrue(routed.contains { $0.path.lowercased().contains(rule) }, "no routed spelling with \(rule)")
        }
        XCTAssertTrue(routed.contains { $0.path != $0.path.lowercased() }, "no routed spelling in another case")

        // 2. The matcher refuses each of them.
        for spelling in routed {
            XCTAssertTrue(RemoteCommandEndpoints.matches(url: url.absoluteString + spelling.path), "not refused: \(spelling)")
        }

        // 3. Through the http module, directly and behind a 307 redirect: refused, nothing routed.
        let redirector = try await CaptureServer.redirector()
        var script = "local http = require 'http'\nlocal SIM, REDIRECTOR = \"\(url.absoluteString)\", \"\(redirector.base)\"\n"
        for (n, spelling) in routed.enumerated() {
            redirector.redirect("/corpus-\(n)-", to: url.absoluteString + spelling.path)
            let method = spelling.method
            script += """
                for _, target in ipairs { SIM .. "\(spelling.path)", REDIRECTOR .. "/corpus-\(n)-" } do
                  local r, err = http.request { method = "\(method)", url = target, json = "\(method)" ~= "GET" and {} or nil }
                  print(target == SIM .. "\(spelling.path)" and "direct" or "redirect", "\(method) \(spelling.path)",
                        r and r.status, err and err.code)
                end

                """
        }
        let hitsBefore = await sim.remoteCommandRouteHits().count
        let (transcript, outcome) = try await runLua(script, modules: [HTTPModule()])
        XCTAssertEqual(transcript.errors.map(\.description), [])
        XCTAssertEqual(outcome.exitCode, 0)
        let lines = transcript.lines
        XCTAssertEqual(lines.count, routed.count * 2)
        for line in lines where !line.hasSuffix("\tnil\trefused") {
            XCTFail("passed the http module: \(line)")
        }
        let hitsAfter = await sim.remoteCommandRouteHits()
        XCTAssertEqual(Array(hitsAfter.dropFirst(hitsBefore)), [], "the http module reached a remote-command handler")
        XCTAssertEqual(redirector.requests("/corpus-").count, routed.count, "every redirect was asked for")
    }

    /// The spellings of the issue, each refused (they passed before).
    func testTheIssuesSpellingsAreRefused() {
        for path in ["/api/v2/notifications.json/loop", "/api/v2/remotecommands.json", "/api/v2/remotecommands%2Ejson",
                     "/api/v2/remotecommands.json/abc", "/api/v2/REMOTECOMMANDS%252ejson/", "/api/v2/notifications/loop.json",
                     "/ns//api/v2/./notifications/x/../loop/"] {
            XCTAssertTrue(RemoteCommandEndpoints.matches(url: "http://127.0.0.1:1" + path), path)
        }
        for path in ["/api/v2/notifications/loops", "/api/v2/remotecommand", "/api/v1/entries.json", "/api/v2/remotecommandsx"] {
            XCTAssertFalse(RemoteCommandEndpoints.matches(url: "http://127.0.0.1:1" + path), path)
        }
    }
}
