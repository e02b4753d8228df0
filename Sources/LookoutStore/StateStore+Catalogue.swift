import Foundation
import GRDB

/// The profile catalogue in the SQLite file.
extension StateStore: ProfileCatalogueStore {
    static let catalogueMigrations: [Migration] = [
        ("v9-catalogue", { db in
            try db.execute(sql: """
                CREATE TABLE profile_catalogue (
                    service TEXT NOT NULL,
                    name TEXT NOT NULL,
                    body TEXT NOT NULL,
                    updated_at REAL NOT NULL,
                    PRIMARY KEY (service, name)
                ) WITHOUT ROWID;
                """)
        }),
    ]

    public func catalogueProfiles() async throws(StateStoreError) -> [CatalogueProfile] {
        try await access { db in
            try Row.fetchAll(db, sql: "SELECT service, name, body, updated_at FROM profile_catalogue ORDER BY service, name")
                .map { row in
                    CatalogueProfile(service: row["service"], name: row["name"], body: row["body"],
                                     updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
                }
        }
    }

    public func putCatalogueProfiles(_ profiles: [CatalogueProfile]) async throws(StateStoreError) {
        try await write { db in
            for profile in profiles {
                try db.execute(sql: """
                    INSERT INTO profile_catalogue (service, name, body, updated_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (service, name) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at
                    """, arguments: [profile.service, profile.name, profile.body, profile.updatedAt.timeIntervalSince1970])
            }
        }
    }

    public func removeCatalogueProfile(service: String, name: String) async throws(StateStoreError) -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM profile_catalogue WHERE service = ? AND name = ?", arguments: [service, name])
            return db.changesCount > 0
        }
    }
}
