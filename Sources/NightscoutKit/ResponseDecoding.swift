import Foundation

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
        do { return try JSONDecoder().decode(T.self, from: response.body) }
        catch { throw NightscoutError.decoding(String(describing: error)) }
    }

    /// Decodes the `result` of a v3 envelope after `check`.
    public static func decodeV3<T: Decodable & Sendable>(_ type: T.Type, from response: NightscoutHTTPResponse) throws -> T {
        try check(response)
        do { return try JSONDecoder().decode(V3Envelope<T>.self, from: response.body).result }
        catch { throw NightscoutError.decoding(String(describing: error)) }
    }

    /// Decodes a v3 CREATE/UPDATE body after `check`.
    public static func decodeV3Write(from response: NightscoutHTTPResponse) throws -> V3WriteResult {
        try check(response)
        do { return try JSONDecoder().decode(V3WriteResult.self, from: response.body) }
        catch { throw NightscoutError.decoding(String(describing: error)) }
    }
}
