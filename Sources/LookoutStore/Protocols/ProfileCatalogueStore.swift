import Foundation

/// One service profile kept in the state database instead of config.toml (`lookout profiles
/// import`): the settings of `[service.name]` as TOML key/value lines. Secrets are never in it:
/// only where they are (`secret_env`, `token_file`), as in config.toml.
public struct CatalogueProfile: Sendable, Equatable {
    /// The service, e.g. `nightscout`.
    public let service: String
    /// The profile name, e.g. `child7`.
    public let name: String
    /// The profile's settings, one `key = value` TOML line each.
    public let body: String
    /// When it was last imported.
    public let updatedAt: Date

    /// A catalogue profile.
    public init(service: String, name: String, body: String, updatedAt: Date) {
        self.service = service
        self.name = name
        self.body = body
        self.updatedAt = updatedAt
    }
}

/// The profile catalogue (`profile_catalogue`): profiles for hundreds of sites, shared by every
/// instance that uses the database, read at start and at each rescan of `serve`.
public protocol ProfileCatalogueStore: Sendable {
    /// Every profile, by service then name.
    func catalogueProfiles() async throws(StateStoreError) -> [CatalogueProfile]
    /// Adds the profiles, replacing any with the same service and name, in one transaction.
    func putCatalogueProfiles(_ profiles: [CatalogueProfile]) async throws(StateStoreError)
    /// Removes one profile; returns whether it was there.
    func removeCatalogueProfile(service: String, name: String) async throws(StateStoreError) -> Bool
}
