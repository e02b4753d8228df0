import ArgumentParser
import Foundation
import LookoutAutomation
import LookoutConfig
import LookoutWire
import LookoutModules
import LookoutStore
import Lua

/// `lookout serve [PATHS…]`: runs scripts for as long as it lives.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run a folder of scripts for as long as it lives (schedules, bridges, alerts).",
        discussion: """
            Each script runs in its own Lua state (with --isolate, in its own worker process). A
            script that crashes restarts after 1 s, doubling to 5 min; an error in one never stops
            the others. Files are checked every 1.5 s and a changed script is reloaded; new files
            start and removed ones stop. SIGTERM or Ctrl-C drains: no new runs start, running tasks
            get --drain (default 10s), then everything is closed; queued outbox items stay queued.
            Health: GET http://127.0.0.1:PORT/status (JSON; [serve] status_port, default 8765,
            --status-port 0 turns it off) and `lookout status` (also from <state>/serve-status.json,
            written every 2 s). The endpoint answers only Host names of its own (loopback, [serve]
            hosts); alerts are acknowledged there only with the ack link of a notification.
            The web view is at http://127.0.0.1:PORT/web/ (sign in with `lookout web login`).
            Paths default to [serve] scripts in the config, else ./Scripts.
            """)

    @Argument(help: "Script files or folders of scripts (default: [serve] scripts, else ./Scripts).")
    var paths: [String] = []

    @OptionGroup var script: ScriptOptions

    @Flag(help: "Run each script in its own worker process (a hang inside C code can then be killed).")
    var isolate = false

    @Option(name: .customLong("status-port"), help: "Port of the loopback status endpoint (0 = off; default from config, else 8765).")
    var statusPort: Int?

    @Option(help: "How long running tasks may go on after SIGTERM or a reload, e.g. 10s.")
    var drain: String = "10s"

    @Option(help: ArgumentHelp("Share the scripts with other instances of cluster NAME using the same state database.",
                               discussion: "Each script runs on exactly one instance, by leases in the database; see README → Running several instances.",
                               valueName: "NAME"))
    var cluster: String?

    @Option(help: ArgumentHelp("This instance's id in the cluster (default host:pid:random).", valueName: "ID"))
    var instance: String?

    @Option(help: "How long a cluster lease lasts without renewal, e.g. 15s (work moves within it and a third more).")
    var lease: String = "15s"

    @Option(name: .customLong("worker"), help: .hidden)
    var worker: String?

    /// A worker's parent's status port: its scripts may not reach it, and ack links point at it.
    @Option(name: .customLong("parent-status-port"), help: .hidden)
    var parentStatusPort: Int?

    func validate() throws {
        if script.trusted {
            throw ValidationError("serve runs a script with io and os only when the config says so: [scripts.\"NAME.lua\"] trusted = true")
        }
        if let statusPort, !(0...65535).contains(statusPort) { throw ValidationError("--status-port must be 0-65535") }
        guard let seconds = Quantities.parseDuration(drain), seconds >= 0 else {
            throw ValidationError("--drain: expected a duration such as 10s, got \(drain)")
        }
        _ = seconds
        if let cluster {
            guard !cluster.isEmpty, cluster.count <= 64, !cluster.contains(where: { $0.isWhitespace || $0.isNewline }) else {
                throw ValidationError("--cluster: expected a name of 1-64 characters without spaces, got \(cluster.debugDescription)")
            }
            if isolate { throw ValidationError("--cluster and --isolate cannot be combined yet: a worker process cannot hold its script's lease") }
        } else if instance != nil {
            throw ValidationError("--instance names this instance in a cluster: give --cluster NAME too")
        }
        guard let ttl = Quantities.parseDuration(lease), (3...600).contains(ttl) else {
            throw ValidationError("--lease: expected a duration from 3s to 10m, got \(lease)")
        }
    }

    func run() async throws {
        let file = try HostEnvironment.load()
        let environment = try await file.addingCatalogue(warn: { FileHandleOutput.standardError.write("lookout serve: \($0)\n") })
        environment.warnAboutSecretFiles()
        // The scripts' recent lines, for the web view (it redacts them when it shows them).
        let lines = ScriptLogLines()
        let logger = environment.bootstrapLogging(verbose: script.verbose) { lines.append(script: $0, $1) }
        let health = HealthRegistry()
        let base = try environment.luaOptions(
            name: "serve", script: script, arguments: [], scriptDirectory: nil, output: { _ in })
        // The configuration with the catalogue's profiles, read again every few seconds (`refreshCatalogue`).
        let live = Locked(environment.config)
        let config = environment.config
        let paths = environment.paths
        let factory = ServeScriptFactory(
            options: { file in
                var options = base
                let name = (file as NSString).lastPathComponent
                options.name = name
                options.arguments = [file]
                let directory = (file as NSString).deletingLastPathComponent
                options.scriptDirectory = directory.isEmpty ? "." : directory
                options.trusted = config.scriptSettings(file: file).trusted
                options.output = {
                    FileHandleOutput.standardOutput.write("[\(name)] \($0)\n")
                    lines.append(script: name, $0)
                }
                options.warnings = {
                    FileHandleOutput.standardError.write("[\(name)] warning: \($0)\n")
                    lines.append(script: name, "warning: \($0)")
                }
                return options
            },
            modules: { _ in HostModules.all(config: live.withLock { $0 }, paths: paths, logger: logger, health: health) })
        var settings = ServeSettings()
        settings.drainDeadline = Quantities.parseDuration(drain) ?? 10
        let log: ServeLog = { FileHandleOutput.standardError.write("lookout serve: \($0)\n") }

        if let worker {
            if let parentStatusPort { ServeStatusAddress.add(port: parentStatusPort) }
            try await ServeWorker.run(file: worker, factory: factory, settings: settings, health: health, paths: paths, log: log)
            return
        }
        let targets = self.paths.isEmpty ? (config.serveScripts ?? ["Scripts"]) : self.paths
        let discovery = ScriptDiscovery(paths: targets)
        if discovery.scan().isEmpty {
            let missing = discovery.missing()
            throw HostSetupError(description: missing.isEmpty
                ? "no .lua scripts in \(targets.joined(separator: ", "))"
                : "not found: \(missing.joined(separator: ", ")) (give script files or folders, or set [serve] scripts)")
        }
        let runFactory = isolate
            ? ServeWorker.factory(script: script, drain: drain, health: health, paths: paths, base: factory, memoryLimit: base.memoryLimit)
            : factory
        let member = try cluster.map { name in
            ClusterMember(
                settings: ClusterSettings(name: name, instance: instance, ttl: Quantities.parseDuration(lease) ?? 15),
                store: try StateBackends.shared(config: config, paths: paths), log: log)
        }
        if isolate, config.table.value(atPath: ["serve", "bind"]) != nil {
            throw HostSetupError(description: "[serve.bind] and --isolate cannot be combined yet: a worker process runs a file once")
        }
        let supervisor = ServeSupervisor(discovery: discovery, factory: runFactory, settings: settings, health: health,
                                         cluster: member, bindings: { live.withLock { $0 }.serveBindings(file: $0) },
                                         profileSettings: { binding in
                                             live.withLock { $0 }.profileRevision(service: binding.service, name: binding.profile)
                                         }, log: log)
        let web = config.serveWeb
        let status = try await ServeStatus.start(
            port: statusPort ?? config.serveStatusPort, health: health, paths: paths,
            extraRoutes: ServeCommand.extraStatusRoutes(environment: environment, health: health, lines: lines),
            door: StatusDoor(config: config), web: web,
            webRoutes: ServeCommand.extraStatusRoutes(environment: environment, health: health, lines: lines, secureCookies: web?.tls == true),
            log: log)

        let stopRequested = AsyncStream<Void>.makeStream()
        let interrupts = InterruptCounter()
        let signals = SignalWatcher { _ in
            if interrupts.increment() > 1 { Foundation.exit(130) }  // a second signal: leave now
            stopRequested.continuation.yield()
        }
        await supervisor.start()
        if let member {
            log("cluster \(member.settings.name): instance \(member.settings.instance); leases of \(Int(member.settings.ttl)) s, "
                + "work moves within \(Int(member.settings.takeover.rounded(.up))) s of an instance's end")
        }
        log("serving \(await supervisor.files.count) script(s) from \(targets.joined(separator: ", "))"
            + (status.url.map { "; status at \($0)" } ?? "") + (status.webURL.map { "; web view at \($0)/web/" } ?? ""))
        let outbox = Task { await ServeCommand.watchOutbox(paths: paths, health: health) }
        let catalogue = Task { await ServeCommand.refreshCatalogue(file: file, live: live, log: log) }
        let startupPages = Task { await StartupPages.releaseWhileServing() }
        var iterator = stopRequested.stream.makeAsyncIterator()
        _ = await iterator.next()
        outbox.cancel()
        catalogue.cancel()
        startupPages.cancel()
        log("stopping: draining running tasks (up to \(drain))")
        await supervisor.stop()
        await status.stop()
        signals.cancel()
        log("stopped")
    }

    /// Reads the profile catalogue again every 5 s: the supervisor's next scan starts the work
    /// of a new profile, stops a removed one and restarts one whose settings changed. A
    /// catalogue that cannot be read (or holds a profile that is not valid) keeps the last good
    /// one; each new problem is logged once.
    static func refreshCatalogue(file: HostEnvironment, live: Locked<HostConfig>, log: @escaping ServeLog) async {
        var lastProblem: String?
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(5))
            var problem: String?
            do {
                let entries = try await HostEnvironment.catalogue(config: file.config, paths: file.paths)
                let merged = try file.config.addingCatalogue(entries).config
                try ServiceProfileSchema.validate(merged)
                live.withLock { $0 = merged }
            } catch {
                problem = "the profile catalogue could not be read again (the last good one stays): \(error)"
            }
            if let problem, problem != lastProblem { log(problem) }
            lastProblem = problem
        }
    }

    /// Keeps an `outbox` component in the health up to date every 10 s: how many uploads and
    /// submissions wait, and the last refusal when some failed for good.
    static func watchOutbox(paths: LookoutPaths, health: HealthRegistry) async {
        while !Task.isCancelled {
            if let store = try? StateBackends.shared(paths: paths),
                let items = try? await store.items(site: nil, states: [.pending, .failed], limit: 100_000)
            {
                let failed = items.filter { $0.state == .failed }
                health.updateComponent("outbox") { entry in
                    entry.outboxDepth = items.count
                    entry.state = failed.isEmpty ? .ok : .failing
                    entry.lastError = failed.last.map { "\(failed.count) failed; last: \($0.lastError ?? "refused")" }
                }
            }
            try? await Task.sleep(for: .seconds(10))
        }
    }

    /// Routes the status server answers besides `GET /status`: the alert acknowledgement of a
    /// notification's ack link, `POST /ack/<id>?episode=…&expires=…&token=…` (and `GET`, a page
    /// whose button posts it). Without the link's token nothing is acknowledged; `lookout ack ID`
    /// on the machine needs none. And the web view under `/web/` (`WebRoutes`: a session from
    /// `lookout web login` to read, its CSRF token to act).
    static func extraStatusRoutes(environment: HostEnvironment, health: HealthRegistry, lines: ScriptLogLines? = nil,
                                  secureCookies: Bool = false) -> [StatusRoute] {
        let paths = environment.paths
        let acks = AlertAcks(paths: paths)
        return AckRoutes.routes(acks: acks, key: { try AckLinkKey.load(paths: paths) })
            + WebRoutes.routes(source: WebSnapshotSource(health: health, paths: paths, config: environment.config, lines: lines),
                               sessions: WebSessions(stateDirectory: paths.stateDirectory), acks: acks, secureCookies: secureCookies)
    }
}
