import Lua
extension HostConfig {
    /// One service profile such as `[nightscout.home]`: its ordinary settings, and the names of
    /// the secrets it configures (never their values or where they live; resolve a secret with
    /// `HostConfig.secret(service:profile:name:environment:)`).
    public struct Profile: Sendable, Equatable {
        /// The service (section) name, e.g. `nightscout`.
        public let service: String
        /// The profile name, e.g. `home`.
        public let name: String
        /// The config file's display name, for messages.
        public let fileName: String
        /// The line where the profile's table was defined.
        public let line: Int
        /// Every key except the secret references (`…_env`, `…_file`), with source positions.
        public let settings: TOMLTable
        /// The secrets configured by reference, sorted: `secret_env` and `token_file` give
        /// `["secret", "token"]`.
        public let secretNames: [String]

        /// Builds a profile from its raw (validated) table.
        init(service: String, name: String, fileName: String, line: Int, raw: TOMLTable) {
            self.service = service
            self.name = name
            self.fileName = fileName
            self.line = line
            var settings = TOMLTable()
            var secrets = Set<String>()
            for entry in raw.entries {
                switch HostConfigSecrets.referenceKind(entry.key) {
                case .environment(let secret), .file(let secret): secrets.insert(secret)
                case nil: settings.set(entry)
                }
            }
            self.settings = HostConfig.removingSecretReferences(settings)
            self.secretNames = secrets.sorted()
        }

        /// The value of a setting.
        public subscript(key: String) -> TOMLValue? { settings[key] }

        /// The line where a setting was defined.
        public func line(of key: String) -> Int? { settings.line(of: key) }

        /// Whether a secret called `name` is configured (by `name_env` or `name_file`).
        public func hasSecret(_ name: String) -> Bool { secretNames.contains(name) }

        /// The key path of a setting, e.g. `nightscout.home.url`.
        public func keyPath(_ key: String) -> String { ConfigWording.keyPath([service, name, key]) }

        /// An error about a setting, located at its value (or at the profile if the key is absent).
        /// For Kits that check the free-form keys they define.
        public func error(key: String, _ message: String) -> ConfigError {
            let entry = settings.entry(key)
            return ConfigError(
                file: fileName, line: entry?.valueLine ?? line, column: entry?.valueColumn,
                keyPath: keyPath(key), message: message)
        }

        /// A string setting; `nil` if absent.
        /// - Throws: `ConfigError` at the value if it is not a string.
        public func string(_ key: String) throws(ConfigError) -> String? {
            try typed(key, "a string") { $0.stringValue }
        }

        /// A boolean setting; `nil` if absent.
        /// - Throws: `ConfigError` at the value if it is not a boolean.
        public func bool(_ key: String) throws(ConfigError) -> Bool? {
            try typed(key, "true or false") { $0.boolValue }
        }

        /// An integer setting; `nil` if absent.
        /// - Throws: `ConfigError` at the value if it is not an integer.
        public func integer(_ key: String) throws(ConfigError) -> Int64? {
            try typed(key, "an integer") { $0.integerValue }
        }

        /// A duration setting in seconds (number of seconds or text such as `"30s"`); `nil` if absent.
        /// - Throws: `ConfigError` at the value if it is not a valid duration.
        public func duration(_ key: String) throws(ConfigError) -> Double? {
            try typed(key, "a duration such as \"30s\" or \"5m\"") { Quantities.duration($0) }
        }

        /// An array of strings; `nil` if absent.
        /// - Throws: `ConfigError` at the value if it is not an array of strings.
        public func strings(_ key: String) throws(ConfigError) -> [String]? {
            try typed(key, "an array of strings") { value in
                guard let elements = value.arrayValue else { return nil }
                let strings = elements.compactMap(\.stringValue)
                return strings.count == elements.count ? strings : nil
            }
        }

        private func typed<T>(
            _ key: String, _ expected: String, _ convert: (TOMLValue) -> T?
        ) throws(ConfigError) -> T? {
            guard let value = settings[key] else { return nil }
            if let converted = convert(value) { return converted }
            throw error(key: key, "expected \(expected), got \(HostConfigSchema.shown(value))")
        }
    }
}
