import ArgumentParser
import Foundation
import LookoutSim
import Lua

/// `lookout sim garmin`.
struct GarminSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "garmin",
        abstract: "A Garmin SSO and Connect API server on 127.0.0.1 (both login flows, MFA, OAuth1/OAuth2, daily data).",
        discussion: """
            Prints its URL, the simulated accounts (an ordinary one and one with MFA, with the MFA \
            code) and a config profile, then serves until Ctrl-C. The accounts and code exist only in \
            the simulator.
            """)

    @Option(help: "Port to listen on (0 = any free port).")
    var port: Int = 0

    @Option(help: "Domain the login identifiers are checked against: garmin.com or garmin.cn.")
    var domain: String = "garmin.com"

    @Option(name: .customLong("token-lifetime"), help: "Lifetime of issued OAuth2 tokens in seconds.")
    var tokenLifetime: Int = 3600

    @Flag(name: .customLong("no-mobile-login"), help: "Answer 404 on the mobile JSON login (clients fall back to the widget flow).")
    var noMobileLogin = false

    func validate() throws {
        guard ["garmin.com", "garmin.cn"].contains(domain) else { throw ValidationError("--domain: garmin.com or garmin.cn") }
        guard tokenLifetime > 0 else { throw ValidationError("--token-lifetime must be positive") }
    }

    func run() async throws {
        let options = GarminSimulator.Options(
            port: port, domain: domain, accessTokenLifetime: tokenLifetime, mobileLoginEnabled: !noMobileLogin)
        let simulator = GarminSimulator(options: options)
        let url: URL
        do {
            url = try await simulator.start()
        } catch {
            throw HostSetupError(description: "cannot start the Garmin simulator: \(error)")
        }
        let o = simulator.options
        say("Garmin simulator at \(url.absoluteString)")
        say("user \(GarminSimulator.Options.defaultEmail) password \"\(GarminSimulator.Options.defaultPassword)\" (simulated account)")
        say("MFA user \(GarminSimulator.Options.mfaEmail) (same password), MFA code \(o.mfaCode)")
        say("config profile:\n  [garmin.sim]\n  url = \"\(url.absoluteString)\"\n  domain = \"\(domain)\"\n  email = \"\(GarminSimulator.Options.defaultEmail)\"\n  password_env = \"GARMIN_PASSWORD\"")
        await SimServing.untilInterrupted()
        await simulator.stop()
    }

    private func say(_ text: String) { FileHandleOutput.standardOutput.write(text + "\n") }
}
