import Foundation

/// What one `SyncManager.sync` or `fullSync` changed in the mirror.
public struct SyncReport: Sendable, Equatable {
    /// The site key (see `NightscoutConfiguration.syncSiteKey`).
    public var site: String
    /// The collection.
    public var collection: V3Collection
    /// Identifiers new to the mirror (or resurrected after a soft deletion), in arrival order.
    public var added: [String] = []
    /// Identifiers already mirrored whose `srvModified` changed, in arrival order.
    public var updated: [String] = []
    /// Identifiers that arrived soft-deleted (`isValid: false`) and were not already mirrored as
    /// deleted with the same `srvModified`; the mirror keeps them as tombstones.
    public var deleted: [String] = []
    /// Documents received that the mirror already held with the same `srvModified`.
    public var unchanged = 0
    /// Pages fetched (history pages plus reconciliation pages).
    public var pages = 0
    /// Documents received (history plus reconciliation).
    public var documents = 0
    /// The history cursor stored at the end (`nil` when history was not read and none was stored).
    public var cursor: HistoryCursor?
    /// `fullSync` only: identifiers found by the date-bounded search that the mirror did not hold
    /// after reading history (typically documents written through API v1, which v3 history never
    /// shows). They are stored, and listed in `added` too.
    public var missedByHistory: [String] = []
    /// `fullSync` only: identifiers of live mirror documents in the range that the server no
    /// longer returns (e.g. permanently deleted). They are reported, not removed.
    public var missingOnServer: [String] = []
    /// `fullSync` only: the API the reconciliation read with (`nil` for `sync`).
    public var reconciledWith: NightscoutAPIVersion?
    /// Wall time the operation took, in seconds.
    public var duration: TimeInterval = 0

    /// Creates an empty report.
    public init(site: String, collection: V3Collection) { self.site = site; self.collection = collection }

    /// `true` when nothing was added, updated or deleted.
    public var isEmpty: Bool { added.isEmpty && updated.isEmpty && deleted.isEmpty }
}
