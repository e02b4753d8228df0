import Logging
import LookoutConfig
import LookoutModules
import LookoutStore
import Lua

/// The modules Lookout gives every script, besides the core ones (`json`, `timer`, `task`,
/// `script`) that the `Lua` layer provides.
public enum HostModules {
    /// The modules for a script, configured from the host config.
    /// - Parameters:
    ///   - confirmation: asks at the terminal before a live Loop remote command (the REPL).
    ///   - sideEffects: `.record(log)` makes modules that reach outside record instead of send.
    ///   - health: where modules report how they are doing (`lookout serve`).
    public static func all(config: HostConfig, paths: LookoutPaths, logger: Logger,
                           confirmation: RemoteConfirmation? = nil, sideEffects: SideEffects = .live,
                           health: HealthRegistry? = nil) -> [any LuaModule] {
        // Scripts' writes leave the room `[state]` keeps for the guard and the audit log.
        StateStore.room = config.stateRoom
        let modules: [any LuaModule] = [
            LogModule(logger: logger),
            ConfigModule(config: config),
            HealthModule(paths: paths),
            HTTPModule(),
            StoreModule(paths: paths, quota: config.limits.storeQuota),
            NightscoutModule(config: config, paths: paths, confirmation: confirmation),
            OutboxModule(paths: paths),
            SignalKModule(config: config, paths: paths, health: health),
            ChartModule(paths: paths, config: config),
            GarminModule(config: config, paths: paths),
            NotifyModule(config: config, paths: paths, logger: logger, sideEffects: sideEffects),
            AlertModule(config: config, paths: paths),
            FeedbackModule(config: config, paths: paths),
            ScheduleModule(config: config, paths: paths, health: health, persistent: sideEffects.log == nil),
        ]
        guard sideEffects.log != nil else { return modules }
        return modules.map { SideEffectsScope(module: $0, sideEffects: sideEffects) }
    }
}
