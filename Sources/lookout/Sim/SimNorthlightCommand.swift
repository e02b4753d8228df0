import ArgumentParser
import Foundation
import LookoutSim
import Lua

/// `lookout sim northlight`.
struct NorthlightSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "northlight",
        abstract: "A Northlight feedback API on 127.0.0.1 (feedback, bugs, votes, board, roadmap, rate limits).",
        discussion: """
            Prints the API URL and a test API key for the chosen tier (and one for each other tier), \
            then serves until Ctrl-C. Rate limits per minute follow the tiers (free 100, starter \
            1000, growth 5000, enterprise unlimited) unless --rate-limit overrides the chosen tier's; \
            the free tier accepts 5 items.
            """)

    @Option(help: "Port to listen on (0 = any free port).")
    var port: Int = 0

    @Option(help: "Tier of the printed test key: free, starter, growth or enterprise.")
    var tier: String = "starter"

    @Option(name: .customLong("rate-limit"), help: "Requests per minute for the chosen tier.")
    var rateLimit: Int?

    func validate() throws {
        if NorthlightSimulator.Tier(rawValue: tier) == nil {
            throw ValidationError("--tier takes free, starter, growth or enterprise, got '\(tier)'")
        }
        if port < 0 || port > 65535 { throw ValidationError("--port takes 0 to 65535") }
        if let rateLimit, rateLimit < 1 { throw ValidationError("--rate-limit takes at least 1") }
    }

    func run() async throws {
        let chosen = NorthlightSimulator.Tier(rawValue: tier) ?? .starter
        var options = NorthlightSimulator.Options(port: port)
        if let rateLimit { options.rateLimits[chosen] = rateLimit }
        let simulator = NorthlightSimulator(options: options)
        let url: URL
        do {
            url = try await simulator.start()
        } catch {
            throw HostSetupError(description: "cannot start the Northlight simulator: \(error)")
        }
        say("Northlight simulator at \(url.absoluteString)")
        say("test API key (\(chosen.rawValue)): \(await simulator.addProject(tier: chosen))")
        for other in NorthlightSimulator.Tier.allCases where other != chosen {
            say("  \(other.rawValue) key: \(await simulator.addProject(tier: other))")
        }
        await SimServing.untilInterrupted()
        await simulator.stop()
    }
}

/// A line on standard output, written at once (stdout may be a pipe).
private func say(_ text: String) { FileHandleOutput.standardOutput.write(text + "\n") }
