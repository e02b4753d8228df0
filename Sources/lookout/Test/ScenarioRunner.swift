import Foundation
import GarminKit
import Logging
import LookoutAutomation
import LookoutConfig
import LookoutModules
import LookoutScenarios
import LookoutSim
import LookoutWire
import Lua

/// Runs one script through one scenario: simulators on 127.0.0.1 fed in virtual time, a
/// throwaway config whose profiles point at them, side effects recorded, and the run stopped
/// when virtual time passes the scenario's end.
struct ScenarioRunner {
    var scenario: Scenario
    var scriptPath: String
    /// Profile names of the user's config to point at the simulators too (besides home/boat).
    var userConfig: HostConfig
    /// Real seconds the whole run may take.
    var timeLimit: Double
    /// Where the script's `print` lines go (with their virtual time).
    var output: @Sendable (String) -> Void

    func run() async throws -> ScenarioReport {
        let began = Date()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("lookout-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: work) }
        let virtual = LuaVirtualTime(start: scenario.start)
        let notices: [String] = []

        // Simulators under the virtual clock.
        let secret = UUID().uuidString
        let nightscout = NightscoutSimulator(options: .init(apiSecret: secret, clock: { virtual.now() }, authFailDelay: .zero))
        let nightscoutURL = try await nightscout.start()
        let token = await nightscout.addSubject(name: "lookout-test", roles: ["readable"])
        var signalK: SignalKSimulator?
        var signalKURL: URL?
        if scenario.boat != nil {
            let sim = try SignalKSimulator(options: .init(vesselName: "Scenario", clock: { virtual.now() }, autoTick: false))
            signalKURL = try await sim.start()
            signalK = sim
        }
        let feed = ScenarioFeed(scenario: scenario, nightscout: nightscout, signalK: signalK)
        var garmin: GarminSimulator?
        var garminURL: URL?
        if scenario.hasGarmin {
            // Tokens outlive the scenario: GarminKit judges expiry by the real clock, the simulator by the virtual one.
            let sim = GarminSimulator(options: .init(accessTokenLifetime: 90 * 86400, clock: { virtual.now() }))
            garminURL = try await sim.start()
            garmin = sim
        }

        // A config pointing every profile the script may name at the simulators.
        let tokenFile = work + "/nightscout-token"
        _ = FileManager.default.createFile(atPath: tokenFile, contents: Data(token.utf8), attributes: [.posixPermissions: 0o600])
        let config = try HostConfig(text: configText(nightscout: nightscoutURL, tokenFile: tokenFile, signalK: signalKURL,
                                                     garmin: garminURL, work: work),
                                    fileName: "lookout-test.toml", baseDirectory: work)
        let paths = LookoutPaths(configFile: work + "/config.toml", stateDirectory: work + "/state")
        _ = try? paths.createStateDirectory()
        if garmin != nil {
            // Log every Garmin profile in to the simulator first, as `lookout garmin login` would.
            for profile in Set(["me"] + userConfig.profiles(service: "garmin")) {
                let connection = try GarminConnection.profile(profile, config: config, paths: paths, environment: [:])
                _ = try await GarminClient(configuration: connection.configuration)
                    .login(email: GarminSimulator.Options.defaultEmail, password: GarminSimulator.Options.defaultPassword)
            }
        }

        // Recording: side effects, warn+ log lines, script errors.
        let effects = SideEffectLog()
        let errors = ErrorList()
        let name = (scriptPath as NSString).lastPathComponent
        let logger = Logger(label: name) { label in TimelineLogHandler(label: label, effects: effects, clock: { virtual.now() }) }
        var options = LuaOptions()
        options.name = name
        options.clock = .virtual(virtual)
        options.suggest = { ConfigWording.suggestion(for: $0, among: $1) }  // "did you mean" for a mistyped method
        options.timeLimit = timeLimit
        options.scriptDirectory = (scriptPath as NSString).deletingLastPathComponent
        options.arguments = [scriptPath]
        let start = scenario.start, output = self.output
        options.output = { line in output("[\(ScenarioReport.offset(virtual.now(), from: start))] \(line)") }
        options.errors = { errors.append($0.description) }
        options.warnings = { effects.append(SideEffect(time: virtual.now(), kind: "log", target: name, summary: $0, details: ["level": "warning"])) }
        let runtime = LuaRuntime(options: options, modules: HostModules.all(config: config, paths: paths, logger: logger,
                                                                              sideEffects: .record(effects)))
        try await runtime.start()

        feed.feed(upTo: scenario.start)
        let end = scenario.end
        virtual.setAdvanceHandler { [runtime] now in
            feed.feed(upTo: min(now, end))
            // Past the end: stop everything (this runs on the Lua thread, between jobs).
            if now > end { runtime.assumeIsolated { $0.cancelAll() } }
        }
        let scenario = self.scenario
        await runtime.withEngine { ScenarioPacer.arm($0, scenario: scenario) }
        let outcome = await runtime.run(file: scriptPath)
        await runtime.close()
        await nightscout.stop()
        await signalK?.stop()
        await garmin?.stop()
        if let message = outcome.message { errors.append(message) }
        if outcome.interrupted { errors.append("interrupted") }
        // `message` is an error outside the script's tasks: it could not be read or compiled.
        return ScenarioReport(scenario: scenario, script: name, effects: effects.all.filter { $0.time <= end },
                              scriptErrors: errors.all, notices: notices, realSeconds: Date().timeIntervalSince(began),
                              scriptLoaded: outcome.message == nil)
    }

    /// Profiles `home` and `boat` plus every profile name of the user's config.
    func configText(nightscout: URL, tokenFile: String, signalK: URL?, garmin: URL? = nil, work: String = "") -> String {
        var text = "# lookout test: every profile points at a local simulator\n"
        for profile in Set(["home"] + userConfig.profiles(service: "nightscout")).sorted() {
            text += "[nightscout.\(Self.key(profile))]\nurl = \"\(nightscout.absoluteString)\"\ntoken_file = \"\(tokenFile)\"\n\n"
        }
        if let signalK {
            for profile in Set(["boat"] + userConfig.profiles(service: "signalk")).sorted() {
                text += "[signalk.\(Self.key(profile))]\nurl = \"\(signalK.absoluteString)\"\n\n"
            }
        }
        if let garmin {
            for profile in Set(["me"] + userConfig.profiles(service: "garmin")).sorted() {
                text += "[garmin.\(Self.key(profile))]\nurl = \"\(garmin.absoluteString)\"\nemail = \"\(GarminSimulator.Options.defaultEmail)\"\n"
                    + "garth_home = \"\(work)/garth-\(profile)\"\n\n"
            }
        }
        // Notification channels (once a `notify` section exists): every channel records.
        if HostConfig.knownSections.contains("notify") {
            for channel in Set(["phone", "partner", "all"] + userConfig.profiles(service: "notify")).sorted() {
                text += "[notify.\(Self.key(channel))]\ntype = \"log\"\n\n"
            }
        }
        let settings = scriptSettingLines()
        if !settings.isEmpty {
            text += "[scripts.\"\((scriptPath as NSString).lastPathComponent)\".settings]\n" + settings.joined(separator: "\n") + "\n"
        }
        return text
    }

    /// The script's settings as TOML lines: the user's `[scripts."SCRIPT".settings]`, as `serve`
    /// and `run` would give them, with the scenario's own settings over them.
    func scriptSettingLines() -> [String] {
        let own = Set(scenario.settings.compactMap { $0.split(separator: "=", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces) })
        let user = userConfig.scriptEntry(file: scriptPath)?.value.tableValue?["settings"]?.tableValue
        let inherited = (user?.entries ?? []).filter { !own.contains($0.key) }
            .map { "\(ConfigWording.quotedKey($0.key)) = \($0.value.description)" }
        return inherited + scenario.settings
    }

    /// A TOML key, quoted unless bare.
    static func key(_ name: String) -> String {
        name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" } ? name : "\"\(name)\""
    }
}

/// Log lines at warning and above become `log` side effects at virtual time; others are dropped.
struct TimelineLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    let label: String
    let effects: SideEffectLog
    let clock: @Sendable () -> Date

    init(label: String, effects: SideEffectLog, clock: @escaping @Sendable () -> Date) {
        self.label = label
        self.effects = effects
        self.clock = clock
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level >= .warning else { return }
        let who = (metadata.merging(event.metadata ?? [:]) { _, new in new })["script"].map { "\($0)" } ?? label
        effects.append(SideEffect(time: clock(), kind: "log", target: who, summary: "\(event.message)",
                                  details: ["level": event.level.rawValue]))
    }
}

/// Errors collected from any thread.
final class ErrorList: Sendable {
    private let items = Locked<[String]>([])
    func append(_ s: String) { items.withLock { $0.append(s) } }
    var all: [String] { items.withLock { $0 } }
}
