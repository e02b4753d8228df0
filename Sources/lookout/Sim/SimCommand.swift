import ArgumentParser
import Foundation
import LookoutConfig
import LookoutScenarios
import LookoutSim
import LookoutWire
import Lua

/// `lookout sim SERVICE`: local simulators that behave like the real servers.
struct SimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sim",
        abstract: "Run a local simulator of a service, for trying scripts without an account.",
        subcommands: [NightscoutSimCommand.self, SignalKSimCommand.self, GarminSimCommand.self, NorthlightSimCommand.self])
}

/// `lookout sim nightscout`.
struct NightscoutSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nightscout",
        abstract: "A Nightscout server on 127.0.0.1 (API v1, v2 auth and Loop notifications, v3).",
        discussion: """
            Prints its URL, an access token for each --token and a config profile to paste, then \
            serves until Ctrl-C. The API secret is the simulator's own test secret unless \
            --api-secret-env names a variable holding another one (at least 12 characters, as \
            Nightscout requires). With --state DIR the data (DIR/nightscout.sqlite), the port and \
            the tokens (written 0600 to DIR/NAME.token) are kept, so a restart keeps the profile.
            """)

    @Option(help: "Port to listen on (0 = any free port).")
    var port: Int = 0

    @Option(name: .customLong("api-secret-env"), help: "Environment variable holding the API secret.")
    var apiSecretEnv: String?

    @Option(help: "Keep data in this SQLite file (default: memory only).")
    var sqlite: String?

    @Option(help: "Fill with this many days of generated CGM data, boluses, carbs and loop status, then keep adding a live reading every 5 minutes.")
    var fill: Double?

    @Option(help: "With --fill: make live readings this many times faster (each still stands for 5 minutes; 60 = one a 5 s).")
    var speed: Double = 1

    @Flag(name: .customLong("no-live"), help: "With --fill: add no live readings after the fill.")
    var noLive = false

    @Option(help: "Add a named scenario to the generated data (repeatable): \(Self.scenarioNames.joined(separator: ", ")).")
    var scenario: [String] = []

    @Option(help: "Seed of the generated data.")
    var seed: UInt64 = 1

    @Option(help: "Create an access token: NAME:ROLE[,ROLE…], e.g. reader:readable or uploader:admin (repeatable).")
    var token: [String] = []

    @Option(help: "Keep the data, port and tokens in this folder: a restart with the same --state has the same URL and tokens.")
    var state: String?

    @Flag(name: .customLong("no-remote-commands"),
          help: "Serve no /api/v2/remotecommands (Loop Remote 2.0), like every released Nightscout.")
    var noRemoteCommands = false

    /// The generator's scenarios in the one spelling Lookout shows (`overnight-low`, as `lookout test`).
    static let scenarioNames = CGMGenerator.Scenario.allCases.map { BuiltinScenarios.canonicalName($0.rawValue) }

    /// The generator's scenario of any spelling of its name (`overnight-low`, `overnightLow`).
    static func generatorScenario(_ name: String) -> CGMGenerator.Scenario? {
        CGMGenerator.Scenario.allCases.first { BuiltinScenarios.canonicalName($0.rawValue) == BuiltinScenarios.canonicalName(name) }
    }

    func validate() throws {
        for name in scenario where Self.generatorScenario(name) == nil {
            let guess = ConfigWording.suggestion(for: BuiltinScenarios.canonicalName(name), among: Self.scenarioNames)
            throw ValidationError("unknown scenario '\(name)'" + (guess.map { " (did you mean \($0)?)" } ?? "")
                                  + "; known: \(Self.scenarioNames.joined(separator: ", "))")
        }
        for spec in token where !spec.contains(":") {
            throw ValidationError("--token takes NAME:ROLE[,ROLE…], got '\(spec)'")
        }
        if fill.map({ $0 < 0 || $0 > 3660 }) == true { throw ValidationError("--fill takes 0 to 3660 days") }
        if !(speed >= 1 && speed <= 3600) { throw ValidationError("--speed takes 1 to 3600, got \(speed)") }
    }

    func run() async throws {
        let kept = try state.map { try SimState(folder: $0) }
        let sqlite = self.sqlite ?? kept.map { $0.folder + "/nightscout.sqlite" }
        let port = self.port != 0 ? self.port : kept?.port ?? 0
        var options = NightscoutSimulator.Options(port: port, persistence: sqlite.map { .sqlite(path: $0) } ?? .memory)
        options.authFailDelay = .milliseconds(5000)
        options.loop.remoteCommands = !noRemoteCommands
        if let apiSecretEnv {
            guard let secret = ProcessInfo.processInfo.environment[apiSecretEnv], !secret.isEmpty else {
                throw HostSetupError(description: "environment variable \(apiSecretEnv) is not set")
            }
            options.apiSecret = secret
        }
        let simulator = NightscoutSimulator(options: options)
        let url: URL
        do {
            url = try await simulator.start()
        } catch {
            throw HostSetupError(description: "cannot start the Nightscout simulator: \(error)")
        }
        say("Nightscout simulator at \(url.absoluteString)")
        if let fill {
            let scenarios = Set(scenario.compactMap(Self.generatorScenario))
            await simulator.fill(days: fill, seed: seed, scenarios: scenarios)
            say("filled with \(fill) days of generated data" + (scenarios.isEmpty ? "" : " (\(scenario.joined(separator: ", ")))"))
        }
        var subjects = kept?.subjects ?? [:]
        for spec in token {
            let parts = spec.split(separator: ":", maxSplits: 1).map(String.init)
            subjects[parts[0]] = SimState.Subject(id: subjects[parts[0]]?.id ?? NightscoutSubject(name: parts[0], roles: []).id,
                                                  roles: parts[1].split(separator: ",").map(String.init))
        }
        var tokenFiles: [String: String] = [:]
        for (name, subject) in subjects.sorted(by: { $0.key < $1.key }) {
            let accessToken = await simulator.addSubject(NightscoutSubject(name: name, roles: subject.roles, id: subject.id))
            if let kept {
                tokenFiles[name] = try kept.writeToken(accessToken, name: name)
                say("token \(name) (\(subject.roles.joined(separator: ", "))): in \(tokenFiles[name]!)")
            } else {
                say("token \(name) (\(subject.roles.joined(separator: ", "))): \(accessToken)")
            }
        }
        try kept?.save(port: url.port ?? port, subjects: subjects)
        let first = token.first.map { String($0.split(separator: ":")[0]) } ?? subjects.keys.sorted().first
        say(Self.profile(url: url, token: first, file: first.flatMap { tokenFiles[$0] }))
        var live: Task<Void, Never>?
        if fill != nil, !noLive {
            let interval = 300 / speed
            say("a live reading every \(Self.describe(seconds: interval))" + (speed == 1 ? "" : " (each stands for 5 minutes)"))
            live = Task { [seed] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(Int64(interval * 1000)))
                    if Task.isCancelled { break }
                    let entry = await simulator.addLiveReading(at: Date(), seed: seed)
                    say("live reading \(entry["sgv"]?.int64Value ?? 0) mg/dL \(entry["direction"]?.stringValue ?? "")")
                }
            }
        }
        await SimServing.untilInterrupted()
        live?.cancel()
        await simulator.stop()
    }

    /// The `[nightscout.sim]` profile to paste into config.toml: the URL and the first token's
    /// file (with --state) or a variable to export (the token of a simulator, never of a real site).
    static func profile(url: URL, token name: String?, file: String?) -> String {
        var lines = ["", "config profile (paste into config.toml):", "[nightscout.sim]", "url = \"\(url.absoluteString)\""]
        if let file {
            lines.append("token_file = \"\(file)\"")
        } else if let name {
            lines.append("token_env = \"NS_SIM_TOKEN\"   # export NS_SIM_TOKEN=<the token of \(name) above>")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// "5 minutes", "1 minute", "5 seconds", "0.5 seconds".
    static func describe(seconds: Double) -> String {
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 {
            let m = Int(seconds / 60)
            return m == 1 ? "minute" : "\(m) minutes"
        }
        let s = seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.2g", seconds)
        return s == "1" ? "second" : "\(s) seconds"
    }
}

/// A line on standard output, written at once (stdout may be a pipe).
private func say(_ text: String) { FileHandleOutput.standardOutput.write(text + "\n") }
