import Foundation

/// Where Lookout keeps its configuration file and its state (SQLite store, REPL history, tokens).
///
/// - `LOOKOUT_HOME` set (tests, portable installs): `$LOOKOUT_HOME/config.toml` and
///   `$LOOKOUT_HOME/state`.
/// - Otherwise the XDG base directories: `$XDG_CONFIG_HOME/lookout/config.toml` (default
///   `~/.config/lookout/config.toml`) and `$XDG_STATE_HOME/lookout` (default
///   `~/.local/state/lookout`). As the XDG specification says, relative XDG paths are ignored.
public struct LookoutPaths: Sendable, Equatable {
    /// The host configuration file (it need not exist).
    public var configFile: String
    /// The directory holding all state; created with mode 0700 by `createStateDirectory()`.
    public var stateDirectory: String

    /// Paths given explicitly.
    public init(configFile: String, stateDirectory: String) {
        self.configFile = configFile
        self.stateDirectory = stateDirectory
    }

    /// The directory that holds `configFile` (relative secret file paths are resolved against it).
    public var configDirectory: String { (configFile as NSString).deletingLastPathComponent }

    /// The REPL history file: `<state>/history`.
    public var historyFile: String { stateDirectory + "/history" }

    /// The SQLite store: `<state>/lookout.sqlite3`.
    public var databaseFile: String { stateDirectory + "/lookout.sqlite3" }

    /// The directory of token files: `<state>/tokens` (mode 0700; files in it 0600).
    public var tokensDirectory: String { stateDirectory + "/tokens" }

    /// The paths for an environment (by default the process's).
    public static func resolve(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> LookoutPaths {
        if let home = nonEmpty(environment["LOOKOUT_HOME"]) {
            let base = absolute(home)
            return LookoutPaths(configFile: base + "/config.toml", stateDirectory: base + "/state")
        }
        let userHome = homeDirectory(environment: environment)
        let configHome = absoluteOnly(environment["XDG_CONFIG_HOME"]) ?? userHome + "/.config"
        let stateHome = absoluteOnly(environment["XDG_STATE_HOME"]) ?? userHome + "/.local/state"
        return LookoutPaths(
            configFile: configHome + "/lookout/config.toml", stateDirectory: stateHome + "/lookout")
    }

    /// Creates the state directory (and its parents) if it is missing; a new state directory gets
    /// mode 0700. An existing directory is left as it is. Returns its path.
    @discardableResult
    public func createStateDirectory() throws(ConfigError) -> String {
        try Self.createPrivateDirectory(stateDirectory, tighten: false)
        return stateDirectory
    }

    /// Creates the tokens directory (and the state directory) if missing, with mode 0700; if it
    /// exists but group or others have access, its mode is set back to 0700. Returns its path.
    @discardableResult
    public func createTokensDirectory() throws(ConfigError) -> String {
        try createStateDirectory()
        try Self.createPrivateDirectory(tokensDirectory, tighten: true)
        return tokensDirectory
    }

    /// `~` or `~/…` expanded with `HOME` from `environment` (falling back to the account's home).
    public static func expandTilde(_ path: String, environment: [String: String]) -> String {
        if path == "~" { return homeDirectory(environment: environment) }
        if path.hasPrefix("~/") { return homeDirectory(environment: environment) + path.dropFirst(1) }
        return path
    }

    /// `HOME` from the environment, else the account's home directory.
    static func homeDirectory(environment: [String: String]) -> String {
        var home = nonEmpty(environment["HOME"]) ?? NSHomeDirectory()
        while home.count > 1 && home.hasSuffix("/") { home.removeLast() }
        return home
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    private static func absoluteOnly(_ value: String?) -> String? {
        guard let value = nonEmpty(value), value.hasPrefix("/") else { return nil }
        return trimmingSlash(value)
    }

    private static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return trimmingSlash(path) }
        let cwd = FileManager.default.currentDirectoryPath
        return trimmingSlash(cwd + "/" + path)
    }

    private static func trimmingSlash(_ path: String) -> String {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }

    private static func createPrivateDirectory(_ path: String, tighten: Bool) throws(ConfigError) {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw ConfigError(file: path, message: "exists but is not a directory")
            }
            if tighten,
                let mode = (try? manager.attributesOfItem(atPath: path))?[.posixPermissions] as? Int,
                mode & 0o077 != 0
            {
                do {
                    try manager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
                } catch {
                    throw ConfigError(file: path, message: "cannot set mode 0700: \(error.localizedDescription)")
                }
            }
            return
        }
        do {
            let parent = (path as NSString).deletingLastPathComponent
            if !parent.isEmpty && !manager.fileExists(atPath: parent) {
                try manager.createDirectory(atPath: parent, withIntermediateDirectories: true)
            }
            try manager.createDirectory(
                atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            // The umask may have narrowed the mode further; never wider than 0700, but make it exact.
            try manager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
        } catch {
            // Another process may have created it in the meantime.
            if manager.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue { return }
            throw ConfigError(file: path, message: "cannot create directory: \(error.localizedDescription)")
        }
    }
}
