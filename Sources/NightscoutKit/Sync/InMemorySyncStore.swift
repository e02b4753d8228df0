import Foundation

/// A `SyncStore` in memory (nothing survives the process), for tests and for Swift programs that
/// need no persistence. Tombstones are kept, as the protocol requires.
public actor InMemorySyncStore: SyncStore {
    private struct Key: Hashable { var site: String; var collection: V3Collection }
    private struct Mirror { var cursor: HistoryCursor?; var documents: [String: MirrorDocument] = [:] }

    private var mirrors: [Key: Mirror] = [:]

    /// The number of successful `apply` calls (for tests and diagnostics).
    public private(set) var applyCount = 0

    /// Creates an empty store.
    public init() {}

    /// See `SyncStore.cursor(site:collection:)`.
    public func cursor(site: String, collection: V3Collection) async throws -> HistoryCursor? {
        mirrors[Key(site: site, collection: collection)]?.cursor
    }

    /// See `SyncStore.apply(site:collection:documents:cursor:)`.
    public func apply(site: String, collection: V3Collection, documents: [MirrorDocument], cursor: HistoryCursor?) async throws {
        let key = Key(site: site, collection: collection)
        var mirror = mirrors[key] ?? Mirror()
        for d in documents { mirror.documents[d.identifier] = d }
        if let cursor { mirror.cursor = cursor }
        mirrors[key] = mirror
        applyCount += 1
    }

    /// See `SyncStore.states(site:collection:identifiers:)`.
    public func states(site: String, collection: V3Collection, identifiers: [String]) async throws -> [String: MirrorState] {
        guard let docs = mirrors[Key(site: site, collection: collection)]?.documents else { return [:] }
        var out: [String: MirrorState] = [:]
        for id in identifiers {
            if let d = docs[id] { out[id] = MirrorState(srvModified: d.srvModified, isValid: d.isValid) }
        }
        return out
    }

    /// See `SyncStore.identifiers(site:collection:from:through:)`.
    public func identifiers(site: String, collection: V3Collection, from: Int64?, through: Int64?) async throws -> Set<String> {
        Set(inRange(site, collection, from, through, includeDeleted: false).map(\.identifier))
    }

    /// See `SyncStore.documents(site:collection:from:through:limit:includeDeleted:)`.
    public func documents(site: String, collection: V3Collection, from: Int64?, through: Int64?, limit: Int?,
                          includeDeleted: Bool) async throws -> [Data] {
        let sorted = inRange(site, collection, from, through, includeDeleted: includeDeleted)
            .sorted { ($0.date!, $0.identifier) > ($1.date!, $1.identifier) }
        return sorted.prefix(limit ?? sorted.count).map(\.raw)
    }

    /// Every stored document of a site and collection, tombstones included, in no order.
    public func allDocuments(site: String, collection: V3Collection) -> [MirrorDocument] {
        mirrors[Key(site: site, collection: collection)].map { Array($0.documents.values) } ?? []
    }

    private func inRange(_ site: String, _ collection: V3Collection, _ from: Int64?, _ through: Int64?,
                         includeDeleted: Bool) -> [MirrorDocument] {
        guard let docs = mirrors[Key(site: site, collection: collection)]?.documents.values else { return [] }
        return docs.filter { d in
            guard let date = d.date, includeDeleted || d.isValid else { return false }
            return date >= (from ?? .min) && date <= (through ?? .max)
        }
    }
}
