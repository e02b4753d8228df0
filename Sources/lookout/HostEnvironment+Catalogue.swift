import Foundation
import LookoutConfig
import LookoutModules
import LookoutStore

extension HostEnvironment {
    /// The state database's profile catalogue, when there is a state database (`[state] url`,
    /// or the SQLite file exists: reading it never creates one).
    /// - Throws: `StateStoreError` when the database cannot be read.
    static func catalogue(config: HostConfig, paths: LookoutPaths) async throws -> [HostConfig.CatalogueEntry] {
        guard config.table.value(atPath: ["state", "url"]) != nil || FileManager.default.fileExists(atPath: paths.databaseFile)
        else { return [] }
        let store = try StateBackends.shared(config: config, paths: paths)
        return try await store.catalogueProfiles().map { .init(service: $0.service, name: $0.name, body: $0.body) }
    }

    /// This environment with the catalogue's profiles added (`run`, `repl`, `serve`). A
    /// catalogue that cannot be read is a warning (the config file's profiles still work); a
    /// profile in both keeps the file's settings, with a warning.
    /// - Throws: `HostSetupError` when a catalogue profile is not valid (its message names it).
    func addingCatalogue(warn: (String) -> Void) async throws -> HostEnvironment {
        let entries: [HostConfig.CatalogueEntry]
        do { entries = try await Self.catalogue(config: config, paths: paths) } catch {
            warn("the profile catalogue was not read: \(error)")
            return self
        }
        guard !entries.isEmpty else { return self }
        do {
            let (merged, shadowed) = try config.addingCatalogue(entries)
            try ServiceProfileSchema.validate(merged)
            for name in shadowed { warn("profile \(name) is in \(config.fileName) and in the catalogue: the file's settings are used") }
            return HostEnvironment(paths: paths, config: merged)
        } catch {
            throw HostSetupError(description: error.description)
        }
    }
}
