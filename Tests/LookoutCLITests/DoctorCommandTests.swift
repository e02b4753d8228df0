import Foundation
import LookoutSim
import XCTest

/// `lookout doctor` against the simulators: reachable and authorised, refused credentials, a
/// Signal K server that refuses the token, and a support bundle without a single secret.
final class DoctorCommandTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase; the simulators are only used from the test's own task.

    private static let nightscout = NightscoutSimulator(options: .init(authFailDelay: .zero))
    private actor Started {
        private var urls: (URL, URL)?
        func urls() async throws -> (URL, URL) {
            if let urls { return urls }
            let ns = try await DoctorCommandTests.nightscout.start()
            let sk = try await SignalKSimulator(options: .init(autoTick: false, security: true)).start()
            urls = (ns, sk)
            return (ns, sk)
        }
    }
    private static let started = Started()

    func testFindingsExitStatusAndARedactedBundle() async throws {
        let (ns, sk) = try await Self.started.urls()
        let token = await Self.nightscout.addSubject(name: "doctor-\(UUID().uuidString.prefix(8))", roles: ["readable"])
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        await Self.nightscout.seed("entries", [["type": "sgv", "sgv": 104, "date": .int(now - 120_000), "device": "doctor-test"]])
        let badToken = "doctor-bad-token-\(UUID().uuidString)"
        let skToken = "eyJhbGciOiJIUzI1NiJ9.eyJkZXZpY2UiOiJ4In0.c2lnbmF0dXJlLW5vdC12YWxpZA"
        try """
            [nightscout.home]
            url = "\(ns.absoluteString)"
            token_env = "NS_TOKEN"
            [nightscout.wrong]
            url = "\(ns.absoluteString)"
            token_env = "NS_BAD"
            [nightscout.writer]
            url = "\(ns.absoluteString)"
            secret_env = "NS_SECRET"
            [signalk.boat]
            url = "\(sk.absoluteString)"
            token_env = "SK_TOKEN"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let env = ["NS_TOKEN": token, "NS_BAD": badToken, "SK_TOKEN": skToken, "NS_SECRET": "doctor-wrong-secret-\(UUID().uuidString)"]
        let run = try lookout(["doctor", "--bundle", work + "/bundle.json", "--timeout", "10"], environment: env)
        assertExit(run, 1)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        func line(_ subject: String) -> String { lines.first { $0.split(separator: " ").dropFirst().first == Substring(subject) } ?? "(no line for \(subject))" }
        XCTAssertTrue(line("config").contains("ok"), run.stdout)
        XCTAssertTrue(line("nightscout.home").hasPrefix("  ok"), run.stdout)
        XCTAssertTrue(line("nightscout.home").contains(", read only; newest entry 2 min old (104 mg/dL)"), run.stdout)
        XCTAssertTrue(line("nightscout.wrong").hasPrefix("  failure"), run.stdout)
        // A readable site with wrong credentials: Nightscout refuses reads with them too; the variable to fix is named.
        XCTAssertTrue(line("nightscout.wrong").contains("the site refused the token in NS_BAD: it is wrong; reads with it are refused too"), run.stdout)
        XCTAssertTrue(line("nightscout.writer").hasPrefix("  failure"), run.stdout)
        XCTAssertTrue(line("nightscout.writer").contains("the site refused the secret in NS_SECRET: it is wrong; reads with it are refused too"), run.stdout)
        XCTAssertTrue(line("signalk.boat").hasPrefix("  failure"), run.stdout)
        XCTAssertTrue(line("signalk.boat").contains("the server refused the token"), run.stdout)
        XCTAssertTrue(run.stdout.contains("3 failed, 0 warnings."), run.stdout)

        let bundlePath = work + "/bundle.json"
        let bundle = try String(contentsOfFile: bundlePath, encoding: .utf8)
        let attributes = try FileManager.default.attributesOfItem(atPath: bundlePath)
        XCTAssertEqual((attributes[.posixPermissions] as? Int).map { $0 & 0o777 }, 0o600)
        let decoded = try JSONSerialization.jsonObject(with: Data(bundle.utf8)) as? [String: Any]
        XCTAssertEqual((decoded?["checks"] as? [Any])?.count, 10)  // with "sites", "state size" and "audit"
        XCTAssertNotNil((decoded?["profiles"] as? [String: Any])?["nightscout.home"])
        for secret in env.values { XCTAssertFalse(bundle.contains(secret) || run.stdout.contains(secret) || run.stderr.contains(secret)) }
    }

    func testNoConfigIsAllGood() throws {
        let run = try lookout(["doctor"])
        assertExit(run, 0)
        XCTAssertTrue(run.stdout.contains("no config file"), run.stdout)
        XCTAssertTrue(run.stdout.hasSuffix("All good.\n"), run.stdout)
    }

    /// Every Northlight profile is checked: the key accepted, a wrong key, a dead URL and a URL
    /// without the API's path each named for what it is; no key in the output.
    func testNorthlightProfilesAreCheckedForReachAndKey() async throws {
        let simulator = NorthlightSimulator()
        let url = try await simulator.start()
        let key = await simulator.addProject(tier: .starter)
        let root = url.absoluteString.replacingOccurrences(of: "/api/v1", with: "")
        try """
            [northlight.app]
            url = "\(url.absoluteString)"
            api_key_env = "NL_KEY"
            [northlight.wrong]
            url = "\(url.absoluteString)"
            api_key_env = "NL_BAD"
            [northlight.dead]
            url = "http://127.0.0.1:9/api/v1"
            api_key_env = "NL_KEY"
            [northlight.path]
            url = "\(root)"
            api_key_env = "NL_KEY"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let bad = "nl-wrong-key-\(UUID().uuidString)"
        let run = try lookout(["doctor", "--timeout", "5"], environment: ["NL_KEY": key, "NL_BAD": bad])
        assertExit(run, 1)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        func line(_ subject: String) -> String { lines.first { $0.split(separator: " ").dropFirst().first == Substring(subject) } ?? "(no line for \(subject))" }
        XCTAssertTrue(line("northlight.app").hasPrefix("  ok") && line("northlight.app").contains("key accepted"), run.stdout)
        XCTAssertTrue(line("northlight.wrong").contains("the server refused the key: the API key in NL_BAD is wrong"), run.stdout)
        XCTAssertTrue(line("northlight.dead").hasPrefix("  failure"), run.stdout)
        XCTAssertTrue(line("northlight.path").contains("no Northlight API there (404): the url should end in /api/v1"), run.stdout)
        XCTAssertFalse(run.stdout.contains("All good."), run.stdout)
        XCTAssertFalse(run.stdout.contains(key) || run.stdout.contains(bad) || run.stderr.contains(key), run.stdout)
    }
}
