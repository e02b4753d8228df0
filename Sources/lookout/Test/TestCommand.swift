import ArgumentParser
import Foundation
import LookoutScenarios
import Lua

/// `lookout test SCRIPT --scenario NAME|FILE [--hours N] [--json]`.
struct TestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Dry-run a script through a scenario in virtual time; side effects are recorded, never sent.",
        discussion: """
            The Nightscout (and, for boat scenarios, Signal K) simulators start on 127.0.0.1 with the
            scenario's data, every nightscout/signalk profile points at them, and time is virtual: an
            8-hour night runs in seconds. Notifications, uploads, remote commands, Signal K writes and
            warn+ log lines are recorded and printed as a timeline; the scenario's expectations decide
            the exit status: 0 all held, 1 an expectation failed or the script raised an error,
            2 usage or scenario error. Built-in scenarios: `lookout test --list`; print one with --show.
            """)

    @Argument(help: "The script to test.")
    var script: String?

    @Option(name: .long, help: "A built-in scenario name or a scenario file (.lua).")
    var scenario: String?

    @Option(name: .long, help: "Run this many hours instead of the scenario's own length.")
    var hours: Double?

    @Option(name: .long, help: "Stop after this many real seconds (default 300).")
    var timeLimit: Double = 300

    @Flag(name: .customLong("no-expect"), help: "Show the timeline only: do not check the scenario's expectations.")
    var noExpect = false

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    @Flag(name: .long, help: "List the built-in scenarios.")
    var list = false

    @Option(name: .long, help: "Print the source of a built-in scenario (a starting point for your own).")
    var show: String?

    func validate() throws {
        if list || show != nil { return }
        guard script != nil else { throw ValidationError("give a script to test") }
        guard scenario != nil else { throw ValidationError("give --scenario NAME|FILE (see --list)") }
        if let hours, !(hours > 0 && hours <= 336) { throw ValidationError("--hours must be in (0, 336]") }
        guard timeLimit > 0 else { throw ValidationError("--time-limit must be positive") }
    }

    func run() async throws {
        if list {
            for name in BuiltinScenarios.names {
                let s = try await ScenarioLoader.load(name)
                print("\(name.padding(toLength: 17, withPad: " ", startingAt: 0)) \(Int(s.hours))h  \(s.description)")
            }
            return
        }
        if let show {
            guard let source = BuiltinScenarios.source(named: show) else {
                throw HostSetupError(description: "no built-in scenario \(show) (known: \(BuiltinScenarios.names.joined(separator: ", ")))")
            }
            print(source)
            return
        }
        guard let script, let scenarioName = scenario else { return }
        guard FileManager.default.isReadableFile(atPath: script) else { throw HostSetupError(description: LuaRuntime.cannotRead(script)) }
        var loaded: Scenario
        do { loaded = try await ScenarioLoader.load(scenarioName) } catch {
            throw HostSetupError(description: "scenario: \(error)")
        }
        if let hours { loaded.hours = hours }
        if noExpect { loaded.expectations = [] }
        let environment = try HostEnvironment.load()
        let json = self.json
        let runner = ScenarioRunner(scenario: loaded, scriptPath: script, userConfig: environment.config, timeLimit: timeLimit,
                                    output: { line in FileHandleOutput.standardError.write(line + "\n") })
        let report: ScenarioReport
        do { report = try await runner.run() } catch {
            throw HostSetupError(description: "cannot run the scenario: \(error)")
        }
        FileHandleOutput.standardOutput.write((json ? report.json : report.text) + "\n")
        if !report.passed {
            if !json && !report.results.allSatisfy(\.passed) && BuiltinScenarios.source(named: scenarioName) != nil {
                // The built-in expectations name the ready scripts' alert ids.
                FileHandleOutput.standardError.write(
                    "lookout: the built-in scenario's expectations name the ready scripts' alert ids; for your own script, "
                        + "see them with `lookout test --show \(BuiltinScenarios.canonicalName(scenarioName))` and copy it into a "
                        + "file with your ids, or run with --no-expect to see only the timeline\n")
            }
            throw ExitCode(1)
        }
    }
}
