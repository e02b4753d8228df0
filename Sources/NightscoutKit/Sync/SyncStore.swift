import Foundation

/// What a mirror knows about one stored document, for classifying a newly received copy.
public struct MirrorState: Sendable, Equatable {
    /// The stored `srvModified` (epoch ms), if any.
    public var srvModified: Int64?
    /// `false` when the stored copy is a soft deletion.
    public var isValid: Bool

    /// Creates a state.
    public init(srvModified: Int64?, isValid: Bool) { self.srvModified = srvModified; self.isValid = isValid }
}

/// Persistent state of a `SyncManager`: a history cursor and a mirror of documents per site and
/// collection.
///
/// Rules every implementation keeps:
/// * `apply` is atomic: the documents and the cursor are stored together or not at all, so an
///   interrupted sync resumes from the last stored page without gaps or repeats.
/// * Documents are upserted by `identifier` (the newest copy replaces the stored one). Soft
///   deletions (`isValid == false`) are kept as tombstones, not removed: reads exclude them unless
///   asked, and they still answer `states(…)`.
/// * Times are epoch milliseconds; ranges are inclusive; a `nil` bound is open. Documents without a
///   `date` are never inside a range.
public protocol SyncStore: Sendable {
    /// The stored history cursor, or `nil` before the first stored page.
    func cursor(site: String, collection: V3Collection) async throws -> HistoryCursor?

    /// Upserts `documents` (in order; a later copy of one identifier wins) and, when `cursor` is
    /// not `nil`, replaces the stored cursor — in one atomic operation.
    func apply(site: String, collection: V3Collection, documents: [MirrorDocument], cursor: HistoryCursor?) async throws

    /// The stored `srvModified`/`isValid` of those of `identifiers` the mirror holds (tombstones
    /// included).
    func states(site: String, collection: V3Collection, identifiers: [String]) async throws -> [String: MirrorState]

    /// The identifiers of the mirror's documents with `date` in `from...through`, tombstones
    /// excluded.
    func identifiers(site: String, collection: V3Collection, from: Int64?, through: Int64?) async throws -> Set<String>

    /// The raw JSON of the mirror's documents with `date` in `from...through`, newest first (ties
    /// by identifier), at most `limit` (`nil`: all); tombstones only when `includeDeleted`.
    func documents(site: String, collection: V3Collection, from: Int64?, through: Int64?, limit: Int?,
                   includeDeleted: Bool) async throws -> [Data]
}

extension SyncStore {
    /// The raw JSON of the mirror's live documents with `date` in `from...through`, newest first,
    /// at most `limit` (tombstones excluded).
    public func documents(site: String, collection: V3Collection, from: Int64? = nil, through: Int64? = nil,
                          limit: Int? = nil) async throws -> [Data] {
        try await documents(site: site, collection: collection, from: from, through: through, limit: limit, includeDeleted: false)
    }
}
