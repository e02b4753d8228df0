import Foundation
import LookoutWire

/// The v3 success envelope `{"status":200,"result":…}` (spec §3.1).
public struct V3Envelope<Result: Decodable & Sendable>: Decodable, Sendable {
    /// The status echoed in the body.
    public var status: Int
    /// The payload.
    public var result: Result
}

/// The body of a v3 CREATE / UPDATE (spec §3.1, §3.3): `identifier`, `lastModified`, and for a
/// deduplication `isDeduplication` / `deduplicatedIdentifier`.
public struct V3WriteResult: Decodable, Sendable, Equatable {
    /// 201 (inserted) or 200 (replaced / deduplicated).
    public var status: Int
    /// The document's identifier (absent on a plain PUT replace).
    public var identifier: String?
    /// Server modification time, epoch ms.
    public var lastModified: Int64?
    /// `true` when the server matched an existing document.
    public var isDeduplication: Bool?
    /// The previous identifier of the matched document when it differed (a v1 document).
    public var deduplicatedIdentifier: String?

    /// Creates a result.
    public init(status: Int, identifier: String? = nil, lastModified: Int64? = nil, isDeduplication: Bool? = nil,
                deduplicatedIdentifier: String? = nil) {
        self.status = status; self.identifier = identifier; self.lastModified = lastModified
        self.isDeduplication = isDeduplication; self.deduplicatedIdentifier = deduplicatedIdentifier
    }

    /// `true` when a new document was inserted (201).
    public var wasInserted: Bool { status == 201 }
}

/// Turning responses into values or `NightscoutError`s.
public enum NightscoutResponse {
    /// Throws the error for a non-2xx response: 401 → `.unauthorized` (with the server's
    /// message), 429/503 → `.temporarilyUnavailable` (with `Retry-After`), everything else → `.http(status:body:)` with the body text truncated.
    public static func check(_ response: NightscoutHTTPResponse) throws {
        guard !(200...299).contains(response.status) else { return }
        if response.status == 401 {
            throw NightscoutError.unauthorized(message: response.errorMessage ?? "Unauthorized")
        }
        if response.status == 429 || response.status == 503 {
            throw NightscoutError.temporarilyUnavailable(status: response.status, retryAfter: response.retryAfter,
                                                         body: response.bodyText())
        }
        throw NightscoutError.http(status: response.status, body: response.bodyText())
    }

    /// Decodes a v1 response body (a JSON array or object) after `check`.
    public static func decodeV1<T: Decodable>(_ type: T.Type, from response: NightscoutHTTPResponse) throws -> T {
        try check(response)
        do { return try JSONValueDecoding.decode(T.self, from: response.body) }
        catch { throw NightscoutError.decoding(String(describing: error)) }
    }

    /// Decodes the `result` of a v3 envelope after `check`.
    public static func decodeV3<T: Decodable & Sendable>(_ type: T.Type, from response: NightscoutHTTPResponse) throws -> T {
        try check(response)
        do { return try JSONValueDecoding.decode(V3Envelope<T>.self, from: response.body).result }
        catch { throw NightscoutError.decoding(String(describing: error)) }
    }

    /// Decodes a v3 CREATE/UPDATE body after `check`.
    public static func decodeV3Write(from response: NightscoutHTTPResponse) throws -> V3WriteResult {
        try check(response)
        do { return try JSONValueDecoding.decode(V3WriteResult.self, from: response.body) }
        catch { throw NightscoutError.decoding(String(describing: error)) }
    }
}

extension NightscoutResponse {
    /// Decodes the documents of a v3 `result` array after `check`. Entries are decoded in one
    /// pass over the body's bytes (each object's fields walked once, switched on by name); other
    /// models, and any body that pass refuses, go through the parsed tree (`decodeV3`): the same
    /// documents, unknown fields and errors either way.
    /// - Parameter singlePass: `false` always takes the tree path (for comparisons).
    public static func decodeV3Documents<D: NightscoutDocument>(_ type: D.Type, from response: NightscoutHTTPResponse,
                                                                singlePass: Bool = true) throws -> [D] {
        try check(response)
        if singlePass, let docs = V3PageScanner.documents(D.self, from: response.body) { return docs }
        return try decodeV3([D].self, from: response)
    }

    /// The HISTORY `ETag` (`W/"<max srvModified>"`, spec §3.11) of `response` as epoch ms, if present.
    static func historyETag(_ response: NightscoutHTTPResponse) -> Int64? {
        guard var text = response.header("ETag")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if text.hasPrefix("W/") { text.removeFirst(2) }
        guard text.count >= 3, text.hasPrefix("\""), text.hasSuffix("\"") else { return nil }
        return Int64(text.dropFirst().dropLast())
    }
}

/// Turning one decoded HISTORY page into a `V3HistoryPage` (shared by `historyPage` and `history`).
enum V3HistoryPaging {
    /// The page's new documents, the advanced cursor, and whether to ask for more.
    static func page<D: NightscoutDocument>(_ docs: [D], cursor: HistoryCursor, limit: Int) -> V3HistoryPage<D> {
        var next = cursor
        let fresh = next.accept(docs)
        // A full page that moved nothing forward (all at one millisecond already seen) would loop.
        let progressed = next != cursor || !fresh.isEmpty
        return V3HistoryPage(documents: fresh, cursor: next,
                             hasMore: HistoryCursor.hasMore(pageCount: docs.count, limit: limit) && progressed)
    }
}
