import ArgumentParser
import Foundation
import Logging
import LookoutAutomation
import LookoutConfig
import LookoutModules
import LookoutSim
import LookoutStore
import LookoutWire
import Lua
import SignalKKit

/// `lookout demo`: Lookout's main job on built-in defaults, with no accounts. It starts the
/// Nightscout and Signal K simulators with live generated data, runs the ready automations
/// against them (the low alert and both Signal K bridges) and shows what happens.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the low alert and the Signal K bridges against simulators, with a live view.",
        discussion: """
            Nothing leaves this computer: both servers are local simulators and the state lives in \
            a temporary folder. One CGM reading every --step seconds stands for five minutes, so a \
            night's low arrives within a couple of minutes. Stop with Ctrl-C.
            """)

    @Option(help: "Seconds between CGM readings (each stands for 5 minutes).")
    var step: Double = 5

    @Option(help: "Stop after this many seconds (default: run until Ctrl-C).")
    var duration: Double?

    @Flag(help: "Print plain status lines instead of redrawing the screen.")
    var plain = false

    @Option(name: .customLong("web-port"), help: "Port of the web view on 127.0.0.1 (0: any free port; -1: no web view).")
    var webPort: Int = 0

    func validate() throws {
        guard step >= 1, step <= 300 else { throw ValidationError("--step takes 1 to 300 seconds") }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
        guard (-1...65535).contains(webPort) else { throw ValidationError("--web-port takes 0-65535, or -1 for no web view") }
    }

    func run() async throws {
        let home = NSTemporaryDirectory() + "lookout-demo-\(getpid())"
        try? FileManager.default.removeItem(atPath: home)
        try FileManager.default.createDirectory(atPath: home + "/state", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let folder: String
        do { folder = try DemoScripts.folder(home: home) } catch {
            throw HostSetupError(description: "cannot write the ready scripts into \(home): \(error)")
        }

        let nightscout = NightscoutSimulator(options: .init(authFailDelay: .zero))
        let boat = try SignalKSimulator(options: .init(rate: 1, vesselName: "Lookout demo"))
        let nsURL: URL, skURL: URL
        do {
            nsURL = try await nightscout.start()
            skURL = try await boat.start()
        } catch {
            throw HostSetupError(description: "cannot start the simulators: \(error)")
        }
        let token = await nightscout.addSubject(name: "demo", roles: ["admin"])
        setenv("LOOKOUT_DEMO_NS_TOKEN", token, 1)
        let trace = DemoTrace(step: step)
        let clock = DemoClock(start: Date(), step: step)
        let feed = DemoFeed(simulator: nightscout, trace: trace, clock: clock)
        await feed.start()
        let weather = DemoWeather(boat: boat, clock: clock, cycle: trace.cycle)
        await weather.start()

        let paths = LookoutPaths(configFile: home + "/config.toml", stateDirectory: home + "/state")
        try clock.story.save(paths)
        try DemoConfig.text(nightscout: nsURL, signalK: skURL, step: step).write(toFile: paths.configFile, atomically: true, encoding: .utf8)
        let config: HostConfig
        do { config = try HostConfig.load(paths: paths) } catch { throw HostSetupError(description: "demo config: \(error)") }
        let environment = HostEnvironment(paths: paths, config: config)

        let log = DemoLog(capacity: plain ? 50 : 8)
        let lines = ScriptLogLines()  // each script's latest lines, for the web view
        let terminal = !plain && isatty(1) == 1
        if terminal {
            LoggingSystem.bootstrap { _ in DemoLogHandler(log: log, lines: lines) }
        } else {
            LoggingSystem.bootstrap { label in LookoutLogHandler(label: label, level: .info, tap: { lines.append(script: $0, $1) }) }
        }
        let scripts = DemoScripts()
        await scripts.start(folder: folder, environment: environment, logger: Logger(label: "lookout"), log: log, clock: clock,
                            lines: lines)

        let stopped = AsyncStream<Void>.makeStream()
        let signals = SignalWatcher { _ in stopped.continuation.finish() }
        let web = webPort < 0 ? nil : try await DemoCommand.startWeb(port: webPort, environment: environment, health: scripts.health,
                                                                      lines: lines)
        if let web, !terminal { FileHandleOutput.standardOutput.write("web view: \(web.link) (one-time sign-in link)\n") }
        let view = DemoView(nightscoutURL: nsURL, signalKURL: skURL, home: home, clock: clock, webLink: web?.link)
        let started = Date()
        let ticker = Task {
            var shown = 0, hinted = false
            while !Task.isCancelled {
                let snapshot = await DemoSnapshot.take(nightscout: nightscout, boat: boat, scripts: scripts, log: log, paths: paths,
                                                       clock: clock)
                if terminal {
                    FileHandleOutput.standardOutput.write("\u{1B}[H\u{1B}[2J" + view.render(snapshot, color: true) + "\n")
                } else {
                    let fresh = log.recent.dropFirst(min(shown, log.recent.count))
                    for line in fresh { FileHandleOutput.standardOutput.write(line + "\n") }
                    shown = log.recent.count
                    if !snapshot.alerts.isEmpty && !hinted {
                        FileHandleOutput.standardOutput.write(view.ackHint + "\n")
                        hinted = true
                    }
                    if let last = snapshot.entries.last {
                        FileHandleOutput.standardOutput.write("BG " + GlucoseText.format(mgdl: last.sgv, direction: last.direction) + "; alerts: "
                            + (snapshot.alerts.isEmpty ? "none" : snapshot.alerts.joined(separator: "; ")) + "\n")
                    }
                    if !snapshot.readings.isEmpty {
                        FileHandleOutput.standardOutput.write("Boat: " + snapshot.readings.joined(separator: ", ") + "\n")
                    }
                }
                if let duration, Date().timeIntervalSince(started) >= duration { stopped.continuation.finish() }
                try? await Task.sleep(for: .seconds(terminal ? 1 : step))
            }
        }
        for await _ in stopped.stream {}
        ticker.cancel()
        signals.cancel()
        await web?.server.stop()
        await feed.stop()
        await weather.stop()
        await scripts.stop()
        FileHandleOutput.standardOutput.write("demo stopped: \(Int(Date().timeIntervalSince(started))) s, \(await feed.live) readings\n")
    }
}

extension DemoCommand {
    /// Starts the web view (status server with the ack and web routes) on 127.0.0.1:`port` and
    /// makes a one-time sign-in link for it.
    static func startWeb(port: Int, environment: HostEnvironment, health: HealthRegistry, lines: ScriptLogLines? = nil) async throws
        -> (server: StatusServer, link: String)
    {
        let paths = environment.paths
        let server = StatusServer(health: health,
                                  extraRoutes: ServeCommand.extraStatusRoutes(environment: environment, health: health, lines: lines),
                                  door: StatusDoor(config: environment.config))
        let bound: Int
        do { bound = try await server.start(port: port) } catch {
            throw HostSetupError(description: "web view: \(error) (try --web-port with another port, or -1)")
        }
        let code: String
        do { code = try WebSessions(stateDirectory: paths.stateDirectory).makeLoginCode(lifetime: 24 * 3600) } catch {
            await server.stop()
            throw HostSetupError(description: "web view: cannot make a sign-in code: \(error)")
        }
        return (server, "http://127.0.0.1:\(bound)/web/login?code=\(code)")
    }
}

/// The configuration the demo writes for its scripts.
enum DemoConfig {
    static func text(nightscout: URL, signalK: URL, step: Double) -> String {
        """
        # Written by `lookout demo`: both servers are local simulators.
        [nightscout.home]
        url = "\(nightscout.absoluteString)"
        token_env = "LOOKOUT_DEMO_NS_TOKEN"

        [signalk.boat]
        url = "\(signalK.absoluteString)"

        [scripts."nightscout-to-signalk.lua".settings]
        who = "demo"
        every = "\(Int(step))s"

        [notify.phone]
        type = "log"

        [notify.partner]
        type = "log"

        # One reading every \(Int(step)) s stands for 5 minutes: the scripts run on story time, so
        # their windows are the real ones; only the timers (real seconds) are one per reading.
        [scripts."low-alert.lua".settings]
        check_every = "\(Int(step))s"

        # Its windows are 30 minutes of story; the squall at the start of each cycle (DemoWeather)
        # blows above the script's own 20 kn threshold.
        [scripts."signalk-to-nightscout.lua".settings]
        every = "\(Int(step * 6))s"

        """
    }
}

/// Reads what the view shows from the simulators and scripts.
enum DemoSnapshot {
    static func take(nightscout: NightscoutSimulator, boat: SignalKSimulator, scripts: DemoScripts, log: DemoLog,
                     paths: LookoutPaths, clock: DemoClock) async
        -> DemoView.Snapshot
    {
        let docs = await nightscout.documents("entries")
        var entries: [(date: Double, sgv: Double, direction: String)] = []
        for d in docs {
            guard let date = d["date"]?.doubleValue, let sgv = d["sgv"]?.doubleValue else { continue }
            entries.append((date, sgv, d["direction"]?.stringValue ?? ""))
        }
        entries.sort { $0.date < $1.date }
        let model = await boat.fullModel()
        var published: [(String, String)] = []
        let selfID = boat.selfContext.split(separator: ".", maxSplits: 1).last.map(String.init) ?? ""
        let crew = model["vessels"]?[selfID]?["crew"]?["demo"]
        if let bg = crew?["bloodGlucose"]?["value"]?.doubleValue { published.append(("crew.demo.bloodGlucose", String(format: "%.1f", bg))) }
        if let trend = crew?["bloodGlucoseTrend"]?["value"]?.stringValue { published.append(("trend", trend)) }
        if let n = model["vessels"]?[selfID]?["notifications"]?["crew"]?["demo"]?["bloodGlucose"]?["value"] {
            published.append(("notification", "\(n["state"]?.stringValue ?? "?") \"\(n["message"]?.stringValue ?? "")\""))
        }
        var alerts: [String] = []
        for a in (try? await AlertAcks(paths: paths).list()) ?? [] where a.isAlerting {
            // How long in story time (the alerts' own clock), as their texts say it.
            let minutes = max(0, Int(clock.now().timeIntervalSince(a.since) / 60))
            alerts.append("\(a.id) \(a.state.uppercased()) for \(minutes) min" + (a.ackedBy.map { " (acknowledged by \($0))" } ?? ""))
        }
        var readings: [String] = []
        for (label, path) in DemoView.readingPaths {
            if let text = await boat.displayText(path) { readings.append("\(label) \(text)") }
        }
        return DemoView.Snapshot(entries: Array(entries.suffix(48)), boat: published, readings: readings, scripts: scripts.summary,
                                 alerts: alerts, log: log.recent)
    }
}
