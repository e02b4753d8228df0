import ArgumentParser
import Foundation
import LookoutConfig
import LookoutModules
import LookoutStore

/// `lookout profiles import|list|remove`: the profile catalogue, service profiles kept in the
/// state database (for hundreds of sites, shared by every instance of a cluster) instead of
/// config.toml. Secrets stay out of it: a profile names where its secrets are (`secret_env`,
/// `token_file` with an absolute path), as in config.toml.
struct ProfilesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profiles",
        abstract: "Keep service profiles in the state database: import, list, remove.",
        discussion: """
            The catalogue's profiles work as if they were in config.toml: nightscout.client("child7"), [serve.bind]
            patterns. A profile in both keeps config.toml's settings. `lookout serve` reads the catalogue again every
            few seconds: a site imported or removed starts or stops without a restart, and a site whose settings
            changed restarts.
            """,
        subcommands: [Import.self, List.self, Remove.self],
        defaultSubcommand: List.self)

    static func store(_ environment: HostEnvironment) throws -> any StateBackend {
        do { return try StateBackends.shared(config: environment.config, paths: environment.paths) } catch {
            throw HostSetupError(description: error.description)
        }
    }

    /// `lookout profiles import FILE`.
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Add or replace profiles from a TOML file of [service.name] sections (secrets by reference only).")

        @Argument(help: "A TOML file such as sites.toml with [nightscout.child1] … sections.")
        var file: String

        func run() async throws {
            let environment = try HostEnvironment.load()
            guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8) else {
                throw HostSetupError(description: "\(file): cannot be read as UTF-8 text")
            }
            let entries: [HostConfig.CatalogueEntry]
            do {
                entries = try HostConfig.catalogueEntries(fromTOML: text, fileName: file)
                // Every Kit's own checks, on the profiles as they will be used.
                try ServiceProfileSchema.validate(try HostConfig().addingCatalogue(entries).config)
            } catch {
                throw HostSetupError(description: error.description)
            }
            guard !entries.isEmpty else { throw HostSetupError(description: "\(file): no profiles ([nightscout.NAME] …) in it") }
            let store = try ProfilesCommand.store(environment)
            let now = Date()
            try await store.putCatalogueProfiles(entries.map {
                CatalogueProfile(service: $0.service, name: $0.name, body: $0.body, updatedAt: now)
            })
            let names = entries.map { "\($0.service).\($0.name)" }
            print("imported \(entries.count) profile(s) into \(store.location): "
                + names.prefix(10).joined(separator: ", ") + (names.count > 10 ? ", …" : ""))
        }
    }

    /// `lookout profiles list`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the catalogue's profiles.")

        func run() async throws {
            let environment = try HostEnvironment.load()
            let store = try ProfilesCommand.store(environment)
            let profiles = try await store.catalogueProfiles()
            guard !profiles.isEmpty else {
                print("the profile catalogue in \(store.location) is empty (add profiles with: lookout profiles import FILE)")
                return
            }
            let merged = try environment.config.addingCatalogue(profiles.map {
                .init(service: $0.service, name: $0.name, body: $0.body)
            }).config
            let day = ISO8601DateFormatter()
            let rows = profiles.map { profile -> [String] in
                let url = merged.publicValue(path: "\(profile.service).\(ConfigWording.quotedKey(profile.name)).url")?.stringValue
                let name = "\(profile.service).\(profile.name)"
                let shadowed = environment.config.profile(service: profile.service, name: profile.name) != nil
                return [name, url ?? "-", day.string(from: profile.updatedAt) + (shadowed ? " (config.toml's is used)" : "")]
            }
            print(TextTable.render(["PROFILE", "URL", "IMPORTED"], rows))
            print("\(profiles.count) profile(s) in \(store.location)")
        }

    }

    /// `lookout profiles remove SERVICE.NAME`.
    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove one profile from the catalogue.")

        @Argument(help: "The profile, such as nightscout.child7.")
        var profile: String

        func run() async throws {
            guard let dot = profile.firstIndex(of: "."), dot != profile.startIndex, profile.index(after: dot) < profile.endIndex else {
                throw ValidationError("expected SERVICE.NAME such as nightscout.child7, got \(profile)")
            }
            let environment = try HostEnvironment.load()
            let store = try ProfilesCommand.store(environment)
            let service = String(profile[..<dot]), name = String(profile[profile.index(after: dot)...])
            guard try await store.removeCatalogueProfile(service: service, name: name) else {
                throw HostSetupError(description: "no profile \(profile) in the catalogue (see: lookout profiles list)")
            }
            print("removed \(profile) from the catalogue")
        }
    }
}
