import Foundation
import LookoutTestSupport
import XCTest

/// `[serve] web`: the web view on a listener of its own, here with a certificate from the config
/// (issue 28). The real binary; a self-signed certificate made with `openssl`; requests with
/// `curl` trusting only that certificate.
final class WebViewListenerTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    /// Runs a tool to its end (at most 60 s).
    func tool(_ path: String, _ arguments: [String]) throws -> ProcessResult {
        let child = try ChildProcess.spawn(executable: path, arguments: arguments, environment: environment(), directory: root)
        return try XCTUnwrap(child.waitForExit(timeout: 60), "\(path) \(arguments.joined(separator: " "))")
    }

    func testTheWebViewHasItsOwnListenerWithTLS() async throws {
        for needed in ["/usr/bin/openssl", "/usr/bin/curl"] where !FileManager.default.isExecutableFile(atPath: needed) {
            throw skipTest("no \(needed): .ci/install-deps installs openssl and curl")
        }
        let certificate = root + "/web.pem", key = root + "/web.key"
        let made = try tool("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                                 "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=127.0.0.1",
                                                 "-addext", "subjectAltName=IP:127.0.0.1"])
        XCTAssertEqual(made.exitCode, 0, made.description)
        let statusPort = try freePort(), webPort = try freePort()
        try writeFile("Scripts/quiet.lua", #"timer.every("1h", function() end)"#)
        try """
            [serve.web]
            port = \(webPort)
            tls_cert = "\(certificate)"
            tls_key = "\(key)"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let serve = try launch(["serve", "--status-port", String(statusPort)])
        defer { serve.terminate() }
        let base = "https://127.0.0.1:\(webPort)"
        serve.waitForOutput(.stderr, containing: "web view at \(base)/web/", timeout: 60)

        // The sign-in link points at the web listener.
        let login = try lookout(["web", "login"])
        assertExit(login, 0)
        let link = login.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(link.hasPrefix(base + "/web/login?code="), link)

        func curl(_ url: String, _ extra: [String] = []) throws -> (status: Int, headers: String, body: String) {
            let result = try tool("/usr/bin/curl", ["-sS", "--max-time", "20", "--cacert", certificate, "-D", "-", "-o", root + "/body",
                                                    "-w", "\n%{http_code}"] + extra + [url])
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            let body = (try? String(contentsOfFile: root + "/body", encoding: .utf8)) ?? ""
            return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"), body)
        }
        let signedIn = try curl(link)
        XCTAssertEqual(signedIn.status, 303, signedIn.headers)
        XCTAssertTrue(signedIn.headers.contains("Secure"), "the session cookie of an https listener is Secure: \(signedIn.headers)")
        let cookie = try XCTUnwrap(signedIn.headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") }
            .map { String($0.dropFirst("set-cookie:".count).split(separator: ";")[0]).trimmingCharacters(in: .whitespaces) },
                                   signedIn.headers)
        let page = try curl(base + "/web/", ["-H", "Cookie: " + cookie])
        XCTAssertEqual(page.status, 200, page.body)
        XCTAssertTrue(page.body.contains(#"data-script="quiet.lua""#), page.body)
        // Only the web view there: the status document stays on the status port.
        XCTAssertEqual(try curl(base + "/status").status, 404)
        XCTAssertEqual(try curl("http://127.0.0.1:\(statusPort)/status").status, 200)
        // Plain http is not answered on the https listener.
        let plain = try tool("/usr/bin/curl", ["-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}",
                                               "http://127.0.0.1:\(webPort)/web/"])
        XCTAssertNotEqual(plain.stdout, "200", plain.description)
    }

    func testABrokenWebSettingIsNamed() throws {
        try writeFile("Scripts/quiet.lua", #"timer.every("1h", function() end)"#)
        try """
            [serve.web]
            port = 8443
            tls_cert = "web.pem"
            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let result = try lookout(["serve", "--status-port", "0"])
        XCTAssertNotEqual(result.exitCode, 0)
        XCTAssertTrue(result.stderr.contains("give both tls_cert and tls_key"), result.stderr)
    }
}
