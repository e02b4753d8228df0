import Logging
import Lua

/// The modules Lookout gives every script, besides the core ones (`json`, `timer`, `task`,
/// `script`) that the `Lua` layer provides.
public enum HostModules {
    /// The modules for a script, configured from the host config.
    public static func all(config: HostConfig, paths: LookoutPaths, logger: Logger) -> [any LuaModule] {
        [
            LogModule(logger: logger),
            ConfigModule(config: config),
            HTTPModule(),
            StoreModule(paths: paths),
            NightscoutModule(config: config, paths: paths),
            OutboxModule(paths: paths),
        ]
    }
}
