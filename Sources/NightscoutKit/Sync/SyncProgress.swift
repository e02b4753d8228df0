import Foundation

/// A progress snapshot, sent after every stored page (for a progress bar).
public struct SyncProgress: Sendable, Equatable {
    /// What the manager is doing.
    public enum Phase: String, Sendable, Equatable {
        /// Reading v3 history after the stored watermark.
        case history
        /// Reading a date range by search (v3 SEARCH or v1) to find what history misses.
        case reconciliation
    }

    /// The collection.
    public var collection: V3Collection
    /// The phase of this snapshot.
    public var phase: Phase
    /// Pages fetched and stored so far (all phases of this operation).
    public var pages: Int
    /// Documents received so far (all phases of this operation).
    public var documents: Int
    /// Documents per second since the operation started.
    public var documentsPerSecond: Double
    /// The history cursor stored so far (`nil` before any).
    public var cursor: HistoryCursor?

    /// The current watermark (`srvModified` epoch ms), if a cursor is stored.
    public var watermark: Int64? { cursor?.watermark }

    /// Creates a snapshot.
    public init(collection: V3Collection, phase: Phase, pages: Int, documents: Int, documentsPerSecond: Double,
                cursor: HistoryCursor?) {
        self.collection = collection; self.phase = phase; self.pages = pages; self.documents = documents
        self.documentsPerSecond = documentsPerSecond; self.cursor = cursor
    }
}
