import Foundation

/// The profile catalogue: service profiles kept in the state database (`lookout profiles
/// import`) for hundreds of sites, merged under the config file's own profiles. Each is checked
/// as config.toml's profiles are (secrets only by reference, never in the clear), and a secret
/// file needs an absolute path, since every instance reads it on its own machine.
extension HostConfig {
    /// How messages name the catalogue.
    public static let catalogueName = "the profile catalogue"

    /// One profile of the catalogue: its service, name and TOML key/value lines.
    public struct CatalogueEntry: Sendable, Equatable {
        /// The service, e.g. `nightscout`.
        public let service: String
        /// The profile name, e.g. `child7`.
        public let name: String
        /// The settings, one `key = value` line each.
        public let body: String

        /// An entry.
        public init(service: String, name: String, body: String) {
            self.service = service
            self.name = name
            self.body = body
        }
    }

    /// The profiles of a TOML document (`[nightscout.child7]` …), checked, as catalogue entries.
    /// - Throws: `ConfigError` naming the file, line and key: a section that is not a service's
    ///   profiles, a secret written in the clear, a relative secret file path.
    public static func catalogueEntries(fromTOML text: String, fileName: String) throws(ConfigError) -> [CatalogueEntry] {
        let table = try TOMLParser.parse(text, fileName: fileName)
        try checkCatalogue(table, fileName: fileName)
        return table.entries.flatMap { section in
            (section.value.tableValue?.entries ?? []).map { profile in
                let lines = (profile.value.tableValue?.entries ?? []).map { "\(ConfigWording.quotedKey($0.key)) = \($0.value)" }
                return CatalogueEntry(service: section.key, name: profile.key, body: lines.joined(separator: "\n"))
            }
        }
    }

    /// This configuration with the catalogue's profiles added; a profile the config file also
    /// has keeps the file's settings and is returned in `shadowed` (`service.name`).
    /// - Throws: `ConfigError` naming the catalogue and the profile when an entry is not valid.
    public func addingCatalogue(_ entries: [CatalogueEntry]) throws(ConfigError) -> (config: HostConfig, shadowed: [String]) {
        var merged = self
        var shadowed: [String] = []
        for entry in entries {
            let header = "[\(ConfigWording.quotedKey(entry.service)).\(ConfigWording.quotedKey(entry.name))]\n"
            let parsed = try TOMLParser.parse(header + entry.body, fileName: Self.catalogueName)
            try Self.checkCatalogue(parsed, fileName: Self.catalogueName)
            guard let profile = parsed.entry(atPath: [entry.service, entry.name]) else { continue }
            if table.entry(atPath: [entry.service, entry.name]) != nil {
                shadowed.append(entry.service + "." + entry.name)
                continue
            }
            var section = merged.table[entry.service]?.tableValue ?? TOMLTable()
            section.set(profile)
            var root = merged.table
            let line = root.entry(entry.service)?.line ?? 0
            root.set(TOMLTable.Entry(key: entry.service, value: .table(section), line: line, column: 1, valueLine: line, valueColumn: 1))
            merged.table = root
            merged.catalogueProfiles.insert(entry.service + "." + entry.name)
        }
        merged.publicTable = Self.redactingURLCredentials(Self.removingSecretReferences(merged.table))
        return (merged, shadowed)
    }

    /// The settings of `[service.name]` as a hash, for noticing a change within one process.
    public func profileRevision(service: String, name: String) -> Int {
        table.value(atPath: [service, name])?.description.hashValue ?? 0
    }

    private static func checkCatalogue(_ table: TOMLTable, fileName: String) throws(ConfigError) {
        for section in table.entries where HostConfigSchema.sections[section.key]?.isProfiles != true {
            throw ConfigError(file: fileName, line: section.line, keyPath: section.key,
                              message: "only service profiles such as [nightscout.child7] go into the catalogue")
        }
        try HostConfigValidator(fileName: fileName).validate(table)
        for section in table.entries {
            for profile in section.value.tableValue?.entries ?? [] {
                for setting in profile.value.tableValue?.entries ?? [] {
                    guard case .file = HostConfigSecrets.referenceKind(setting.key),
                          let path = setting.value.stringValue, !path.hasPrefix("/") else { continue }
                    throw ConfigError(
                        file: fileName, line: setting.valueLine, column: setting.valueColumn,
                        keyPath: ConfigWording.keyPath([section.key, profile.key, setting.key]),
                        message: "a secret file in the catalogue needs an absolute path (each instance reads it on its own machine)")
                }
            }
        }
    }
}
