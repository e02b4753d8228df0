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
        var fresh: [D] = []
        for doc in page {
            guard let srv = doc.common.srvModified?.epochMilliseconds else { fresh.append(doc); continue }
            let id = doc.common.primaryKey ?? ""
            if srv < watermark { continue }
            if srv == watermark {
                if acceptedAtWatermark.contains(id) { continue }
                acceptedAtWatermark.insert(id)
            } else {
                watermark = srv
                acceptedAtWatermark = [id]
            }
            fresh.append(doc)
        }
        return fresh
    }

    /// Whether another page should be requested after a page of `count` documents with `limit`.
    public static func hasMore(pageCount count: Int, limit: Int) -> Bool { count >= limit }
}
