import Foundation
import PostgresNIO

/// The profile catalogue on PostgreSQL.
extension PostgresStateStore: ProfileCatalogueStore {
    public func catalogueProfiles() async throws(StateStoreError) -> [CatalogueProfile] {
        try await withConnection { [self] connection in
            try await self.rows("SELECT service, name, body, updated_at FROM profile_catalogue ORDER BY service, name", on: connection)
                .map { row in
                    CatalogueProfile(
                        service: try row["service"].decode(String.self), name: try row["name"].decode(String.self),
                        body: try row["body"].decode(String.self),
                        updatedAt: Date(timeIntervalSince1970: try row["updated_at"].decode(Double.self)))
                }
        }
    }

    public func putCatalogueProfiles(_ profiles: [CatalogueProfile]) async throws(StateStoreError) {
        try await transaction { [self] connection in
            for profile in profiles {
                try await self.execute("""
                    INSERT INTO profile_catalogue (service, name, body, updated_at)
                    VALUES (\(profile.service), \(profile.name), \(profile.body), \(profile.updatedAt.timeIntervalSince1970))
                    ON CONFLICT (service, name) DO UPDATE SET body = EXCLUDED.body, updated_at = EXCLUDED.updated_at
                    """, on: connection)
            }
        }
    }

    public func removeCatalogueProfile(service: String, name: String) async throws(StateStoreError) -> Bool {
        try await withConnection { [self] connection in
            try await self.execute("""
                DELETE FROM profile_catalogue WHERE service = \(service) AND name = \(name) RETURNING 1
                """, on: connection) > 0
        }
    }
}
