import Foundation

/// The incremental-sync watermark for v3 HISTORY (spec §3.11), as a pure value.
///
/// The server returns documents with `srvModified` strictly greater than the requested value, in
/// ascending `srvModified` order. A page cut between documents sharing one millisecond would lose
/// the rest, so the cursor asks from `watermark − 1` and drops the documents it has already
/// accepted at the watermark millisecond (by `identifier`).
public struct HistoryCursor: Sendable, Equatable, Codable {
    /// The greatest `srvModified` accepted so far (epoch ms, at least `V3History.beginningOfTime`).
    public private(set) var watermark: Int64
    /// Identifiers accepted with `srvModified == watermark`.
    public private(set) var acceptedAtWatermark: Set<String>

    /// Starts at `watermark` (default: the beginning of time the server accepts).
    public init(watermark: Int64 = V3History.beginningOfTime) {
        self.watermark = max(watermark, V3History.beginningOfTime)
        self.acceptedAtWatermark = []
    }

    /// The value for `/history/{lastModified}`.
    public var requestValue: Int64 { max(V3History.beginningOfTime, watermark - 1) }

    /// Returns the documents of `page` not seen before, in order, and advances the watermark.
    /// Documents without `srvModified` are returned but do not move the watermark.
    public mutating func accept<D: NightscoutDocument>(_ page: [D]) -> [D] {
        page.filter { accept(srvModified: $0.common.srvModified?.epochMilliseconds, identifier: $0.common.primaryKey) }
    }

    /// Whether one document of a page (in page order) is new, advancing the watermark if so.
    /// For callers that read pages without decoding them into models.
    public mutating func accept(srvModified: Int64?, identifier: String?) -> Bool {
        guard let srv = srvModified else { return true }
        let id = identifier ?? ""
        if srv < watermark { return false }
        if srv == watermark {
            return acceptedAtWatermark.insert(id).inserted
        }
        watermark = srv
        acceptedAtWatermark.removeAll(keepingCapacity: true)  // no new set per document
        acceptedAtWatermark.insert(id)
        return true
    }

    /// Whether another page should be requested after a page of `count` documents with `limit`.
    public static func hasMore(pageCount count: Int, limit: Int) -> Bool { count >= limit }
}
