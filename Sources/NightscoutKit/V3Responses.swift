import Foundation
import LookoutWire

/// The outcome of a v3 CREATE (spec §3.3).
public struct V3CreateResult: Sendable, Equatable {
    /// The stored document's identifier.
    public var identifier: String
    /// `true` when the server matched an existing document and replaced it (200) instead of
    /// inserting (201).
    public var isDeduplicated: Bool
    /// The matched document's previous identifier, when it differed (a v1 document).
    public var deduplicatedIdentifier: String?
    /// Server modification time, epoch ms.
    public var lastModified: Int64?
}

/// `GET /api/v3/version` (spec §3.12).
public struct V3Version: Sendable, Equatable, Decodable {
    /// Server version (e.g. `15.0.7`).
    public var version: String
    /// API version (e.g. `3.0.3-alpha`).
    public var apiVersion: String
    /// Server time, epoch ms.
    public var srvDate: Int64?
    /// Storage description.
    public var storage: JSONValue?
}

/// `GET /api/v3/status` (spec §3.12): VERSION plus the caller's permissions per collection.
public struct V3Status: Sendable, Equatable, Decodable {
    /// Server version.
    public var version: String
    /// API version.
    public var apiVersion: String
    /// Server time, epoch ms.
    public var srvDate: Int64?
    /// Collection → a subset of `"crud"` (server quirk: only wildcard permissions show up).
    public var apiPermissions: [String: String]?
}

/// `GET /api/v3/lastModified` (spec §3.12).
public struct V3LastModified: Sendable, Equatable, Decodable {
    /// Server time, epoch ms.
    public var srvDate: Int64
    /// Collection → latest modification, epoch ms (collections without data or permission are absent).
    public var collections: [String: Int64]
}

/// One page of v3 HISTORY and the cursor to continue from (persist it between runs).
public struct V3HistoryPage<Document: NightscoutDocument>: Sendable {
    /// New or changed documents in `srvModified` order, including soft deletions
    /// (`common.isDeleted`).
    public var documents: [Document]
    /// The cursor after this page.
    public var cursor: HistoryCursor
    /// Whether the server may have more.
    public var hasMore: Bool
}
