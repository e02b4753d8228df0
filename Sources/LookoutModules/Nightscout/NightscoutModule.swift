import Foundation
import LookoutConfig
import LookoutStore
import Lua
import NightscoutKit
import LookoutWire

/// `nightscout`: clients for Nightscout sites, and the glucose helpers of seed 001.
///
/// `nightscout.client "home"` reads `[nightscout.home]` from the config; `nightscout.connect{…}`
/// takes the options itself. Client methods wait without blocking other tasks and return
/// `nil, err` on failure (`err.service == "nightscout"`); documents are plain tables with the
/// server's field names. See `Stubs/nightscout.lua` for the script-facing documentation.
public struct NightscoutModule: LuaModule {
    public let name = "nightscout"
    public var stub: String { String(decoding: PackageResources.nightscout_lua, as: UTF8.self) }

    /// Where `nightscout.client` finds profiles.
    let config: HostConfig
    /// Where the profiles' `…_env` secrets are read from (never for a name a script gives).
    let environment: [String: String]
    /// Opens the state database (the outbox), on first use and off the Lua thread.
    let openStore: @Sendable () throws -> any StateBackend
    /// When failed uploads are tried again.
    let retryPolicy: RetryPolicy
    /// Asks at the terminal before a live remote command (the REPL), if set.
    let confirmation: RemoteConfirmation?

    /// The module for scripts, with the outbox and audit log in the state database at `paths`.
    public init(config: HostConfig, paths: LookoutPaths, confirmation: RemoteConfirmation?,
         environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.init(config: config, environment: environment, confirmation: confirmation) { try StateBackends.shared(paths: paths) }
    }

    /// The module over an open store (tests), optionally with its own retry timing.
    public init(config: HostConfig, store: any StateBackend, environment: [String: String], retryPolicy: RetryPolicy = RetryPolicy(),
         confirmation: RemoteConfirmation? = nil) {
        self.init(config: config, environment: environment, retryPolicy: retryPolicy, confirmation: confirmation) { store }
    }

    private init(config: HostConfig, environment: [String: String], retryPolicy: RetryPolicy = RetryPolicy(),
                 confirmation: RemoteConfirmation?, openStore: @escaping @Sendable () throws -> any StateBackend) {
        self.config = config
        self.environment = environment
        self.retryPolicy = retryPolicy
        self.confirmation = confirmation
        self.openStore = openStore
    }

    public func push(into engine: LuaEngine, stack: LuaStack) throws {
        var methods = NightscoutSite.readMethods.merging(NightscoutSite.writeMethods) { first, _ in first }
        methods["history"] = { call in try NightscoutSite.history(call) }
        methods.merge(NightscoutSite.remoteMethods) { first, _ in first }
        methods.merge(NightscoutSite.remote2Methods) { first, _ in first }
        methods.merge(NightscoutSite.syncMethods) { first, _ in first }
        let defaultUnit = NightscoutGlucoseText.DefaultUnit(config: config)
        methods.merge(NightscoutGlucoseText.methods(defaultUnit)) { first, _ in first }
        engine.register(type: NightscoutSite.type, methods: methods)
        NightscoutProfileMethods.register(engine: engine, stack: stack)
        try NightscoutRemoteCommandHandle.register(engine: engine, stack: stack)
        let config = self.config, environment = self.environment, confirmation = self.confirmation
        let outboxes = NightscoutOutboxes.Opener(openStore: openStore, policy: retryPolicy, quota: config.limits.outboxQuota)
        let library: [String: LuaBinding] = [
            "client": { call in
                let name = try call.string(1)
                return try Self.open(call, outboxes: outboxes, confirmation: confirmation) {
                    try NightscoutConnection.profile(name, config: config, environment: environment)
                }
            },
            "connect": { call in
                try Self.open(call, outboxes: outboxes, confirmation: confirmation) { try NightscoutConnection.options(call, 1) }
            },
            "direction": { call in
                let slope = try call.number(1)
                return call.returning(.text(TrendDirection(slopeMgdlPerMinute: slope).rawValue))
            },
            "to_mmol": { call in call.returning(.double(GlucoseUnit.mmol(fromMgdl: try call.number(1)))) },
            "to_mgdl": { call in call.returning(.double(GlucoseUnit.mgdl(fromMmol: try call.number(1)))) },
        ]
        engine.pushLibrary(library.merging(NightscoutGlucoseText.library(defaultUnit)) { first, _ in first }, prefix: "nightscout.", on: stack)
    }

    /// Pushes a client object, or `nil, err` for a configuration problem (bad arguments raise).
    /// Opening the site's outbox in the background sends uploads an earlier run left pending.
    static func open(_ call: LuaCall, outboxes: NightscoutOutboxes.Opener, confirmation: RemoteConfirmation?,
                     _ connection: () throws -> NightscoutConnection) throws -> LuaReturn {
        do {
            let c = try connection()
            let queue = OutboxItem.siteKey(for: c.configuration) + "#" + c.identity
            let client = NightscoutClientPool.client(key: queue, configuration: c.configuration, timeout: c.timeout)
            Task.detached { _ = try? outboxes.outbox(for: client, queue: queue) }
            let remote = NightscoutRemote(settings: c.remote, queue: queue, site: RemoteCommandSite.key(for: c.configuration.siteURL),
                                          openStore: outboxes.openStore, confirmationBox: confirmation)
            call.push(object: NightscoutSite(client: client, label: c.label, queue: queue, outboxes: outboxes, remote: remote, units: c.units),
                      type: NightscoutSite.type)
            return .values(1)
        } catch let raise as LuaRaise {
            throw raise
        } catch {
            return call.failure(LuaErrorInfo.nightscout(error))
        }
    }
}
