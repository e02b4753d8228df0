import Foundation

extension HostConfig {
    /// A resolved secret. Its `description`, `debugDescription` and mirror never show the value,
    /// so printing or dumping it by accident does not leak it.
    public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {
        /// Where a secret came from.
        public enum Source: Sendable, Equatable {
            /// An environment variable, by name.
            case environment(variable: String)
            /// A file, by its expanded path.
            case file(path: String)
        }

        /// The secret itself. Hand it to the Kit; never log or display it.
        public let value: String
        /// Where it came from.
        public let source: Source
        /// Problems that did not stop resolution, ready to show (e.g. a token file readable by
        /// other users). Never contain the value.
        public let warnings: [String]

        /// Creates a resolved secret.
        public init(value: String, source: Source, warnings: [String] = []) {
            self.value = value
            self.source = source
            self.warnings = warnings
        }

        /// `secret from $VAR` or `secret from file PATH`; never the value.
        public var description: String {
            switch source {
            case .environment(let variable): return "secret from $\(variable)"
            case .file(let path): return "secret from file \(path)"
            }
        }

        /// Same as `description`.
        public var debugDescription: String { description }

        /// A mirror that shows only the source and warnings.
        public var customMirror: Mirror {
            Mirror(self, children: ["source": source, "warnings": warnings])
        }
    }

    /// Resolves the secret `name` of a profile (e.g. `"secret"` in `[nightscout.home]`): from the
    /// variable named by `<name>_env` if that key exists and the variable is set and non-empty,
    /// otherwise from the file named by `<name>_file` (`~` expanded; a relative path is relative to
    /// the config file's directory). One trailing newline is removed from a file's content.
    ///
    /// Works for any profile-like section (`service` is the section name).
    ///
    /// - Returns: `nil` if neither `<name>_env` nor `<name>_file` is configured (or there is no
    ///   such profile). A file that group or others can read is used, with a warning.
    /// - Throws: `ConfigError` at the key's line, naming the variable or path (never the value),
    ///   if the variable is unset or empty, or the file is missing, unreadable, not text or empty.
    public func secret(
        service: String, profile: String, name: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigError) -> Secret? {
        try secret(section: [service, profile], name: name, environment: environment)
    }

    /// Resolves the secret `name` of any table (`["state"]` for `[state] password_env`), as
    /// `secret(service:profile:name:environment:)` does for a profile.
    public func secret(
        section: [String], name: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigError) -> Secret? {
        guard let table = table.value(atPath: section)?.tableValue else { return nil }
        let envEntry = table.entry(name + "_env")
        let fileEntry = table.entry(name + "_file")
        if envEntry == nil && fileEntry == nil { return nil }

        var environmentError: ConfigError?
        if let envEntry, let variable = envEntry.value.stringValue {
            let path = section + [envEntry.key]
            if let value = environment[variable], !value.isEmpty {
                return Secret(value: value, source: .environment(variable: variable))
            }
            let state = environment[variable] == nil ? "is not set" : "is empty"
            environmentError = secretError(envEntry, path, "environment variable \(variable) \(state)")
        }
        if let fileEntry, let file = fileEntry.value.stringValue {
            return try readSecretFile(
                file, entry: fileEntry, path: section + [fileEntry.key], environment: environment)
        }
        if let environmentError { throw environmentError }
        return nil
    }

    private func secretError(_ entry: TOMLTable.Entry, _ path: [String], _ message: String) -> ConfigError {
        ConfigError(
            file: fileName, line: entry.line, column: entry.valueColumn, keyPath: ConfigWording.keyPath(path),
            message: message)
    }

    private func readSecretFile(
        _ file: String, entry: TOMLTable.Entry, path keyPath: [String], environment: [String: String]
    ) throws(ConfigError) -> Secret {
        var path = LookoutPaths.expandTilde(file, environment: environment)
        if !path.hasPrefix("/") {
            let base = baseDirectory ?? FileManager.default.currentDirectoryPath
            path = base + "/" + path
        }
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw secretError(entry, keyPath, "secret file \(path) does not exist")
        }
        guard !isDirectory.boolValue else {
            throw secretError(entry, keyPath, "secret file \(path) is a directory")
        }
        guard manager.isReadableFile(atPath: path), let data = manager.contents(atPath: path) else {
            throw secretError(entry, keyPath, "secret file \(path) cannot be read")
        }
        guard var value = String(data: data, encoding: .utf8) else {
            throw secretError(entry, keyPath, "secret file \(path) is not UTF-8 text")
        }
        if value.hasSuffix("\r\n") {
            value.removeLast(1)  // "\r\n" is one Character
        } else if value.hasSuffix("\n") {
            value.removeLast()
        }
        guard !value.isEmpty else { throw secretError(entry, keyPath, "secret file \(path) is empty") }
        let warnings = readableByOthers(path, entry: entry, keyPath: keyPath).map { [$0] } ?? []
        return Secret(value: value, source: .file(path: path), warnings: warnings)
    }

    /// The warning for a secret file that group or others can read, or nil.
    private func readableByOthers(_ path: String, entry: TOMLTable.Entry, keyPath: [String]) -> String? {
        guard let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int,
              mode & 0o044 != 0 else { return nil }
        let octal = String(mode & 0o777, radix: 8)
        let location = "\(fileName):\(entry.line): \(ConfigWording.keyPath(keyPath))"
        return "\(location): secret file \(path) can be read by other users (mode 0\(octal)); run: chmod 600 \(path)"
    }

    /// A warning for every `…_file` secret of every profile (services and notification channels)
    /// whose file group or others can read; files that do not exist are left to the code that
    /// reads them. Never reads a file's content. `lookout run` and `serve` print these once at
    /// start (standard error), `lookout doctor` lists them.
    public func secretFileWarnings(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        var warnings: [String] = []
        for service in HostConfig.knownServices + ["notify"] {
            for profile in profiles(service: service) {
                guard let table = table.value(atPath: [service, profile])?.tableValue else { continue }
                for entry in table.entries where entry.key.hasSuffix("_file") {
                    guard let file = entry.value.stringValue else { continue }
                    var path = LookoutPaths.expandTilde(file, environment: environment)
                    if !path.hasPrefix("/") { path = (baseDirectory ?? FileManager.default.currentDirectoryPath) + "/" + path }
                    if let warning = readableByOthers(path, entry: entry, keyPath: [service, profile, entry.key]) {
                        warnings.append(warning)
                    }
                }
            }
        }
        return warnings
    }
}
