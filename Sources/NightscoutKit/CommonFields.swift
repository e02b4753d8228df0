import Foundation
import LookoutWire

/// The fields every Nightscout document may carry (spec §4.1): the v1 `_id`, the v3 common
/// fields and the two time fields.
public struct CommonFields: Sendable, Equatable {
    /// Mongo ObjectId (24 hex) or, on uploads by some apps, a client id (`_id`).
    public var id: String?
    /// v3 primary key (`identifier`).
    public var identifier: String?
    /// Event time as epoch milliseconds (`date`; entries always, v3 everywhere).
    public var date: NightscoutDate?
    /// Event time as ISO string (`created_at`; v1 treatments, device status, profile, food).
    public var createdAt: NightscoutDate?
    /// Offset from UTC in minutes (`utcOffset`, −1440…1440).
    public var utcOffset: Int?
    /// Originating application (`app`, required by v3).
    public var app: String?
    /// Originating device (`device`, part of the v3 identifier).
    public var device: String?
    /// Server creation time (`srvCreated`, v3 only).
    public var srvCreated: NightscoutDate?
    /// Server modification time (`srvModified`, v3 only).
    public var srvModified: NightscoutDate?
    /// JWT subject that created or replaced the document (`subject`).
    public var subject: String?
    /// JWT subject of the last PATCH/DELETE (`modifiedBy`).
    public var modifiedBy: String?
    /// `false` only on soft-deleted documents (`isValid`).
    public var isValid: Bool?
    /// Locks the document against changes (`isReadOnly`).
    public var isReadOnly: Bool?

    /// Creates common fields; everything defaults to absent.
    public init(id: String? = nil, identifier: String? = nil, date: NightscoutDate? = nil,
                createdAt: NightscoutDate? = nil, utcOffset: Int? = nil, app: String? = nil,
                device: String? = nil, srvCreated: NightscoutDate? = nil, srvModified: NightscoutDate? = nil,
                subject: String? = nil, modifiedBy: String? = nil, isValid: Bool? = nil, isReadOnly: Bool? = nil) {
        self.id = id; self.identifier = identifier; self.date = date; self.createdAt = createdAt
        self.utcOffset = utcOffset; self.app = app; self.device = device; self.srvCreated = srvCreated
        self.srvModified = srvModified; self.subject = subject; self.modifiedBy = modifiedBy
        self.isValid = isValid; self.isReadOnly = isReadOnly
    }

    /// The event time: `date` if present, else `created_at`.
    public var eventTime: NightscoutDate? { date ?? createdAt }

    /// `true` unless the server marked the document soft-deleted (`isValid: false`).
    public var isDeleted: Bool { isValid == false }

    /// The v3 primary key, falling back to the v1 `_id` (which v3 shows as `identifier`).
    public var primaryKey: String? { identifier ?? id }

    init(reading r: inout DocumentReader) throws {
        id = try r.string("_id")
        identifier = try r.string("identifier")
        date = try r.value("date")
        createdAt = try r.value("created_at")
        utcOffset = try r.int("utcOffset")
        app = try r.string("app")
        device = try r.string("device")
        srvCreated = try r.value("srvCreated")
        srvModified = try r.value("srvModified")
        subject = try r.string("subject")
        modifiedBy = try r.string("modifiedBy")
        isValid = try r.bool("isValid")
        isReadOnly = try r.bool("isReadOnly")
    }

    func write(to w: inout DocumentWriter) throws {
        try w.put("_id", id)
        try w.put("identifier", identifier)
        try w.put("date", date)
        try w.put("created_at", createdAt)
        try w.put("utcOffset", utcOffset)
        try w.put("app", app)
        try w.put("device", device)
        try w.put("srvCreated", srvCreated)
        try w.put("srvModified", srvModified)
        try w.put("subject", subject)
        try w.put("modifiedBy", modifiedBy)
        try w.put("isValid", isValid)
        try w.put("isReadOnly", isReadOnly)
    }
}

/// A Nightscout document: common fields, typed fields, and the fields the model does not know
/// (`extra`), which are re-emitted on encoding so a read-modify-write keeps them.
public protocol NightscoutDocument: Sendable, Codable, Equatable {
    /// The common fields (`_id`, `identifier`, `date`, `created_at`, …).
    var common: CommonFields { get set }
    /// Fields this model does not know, kept verbatim.
    var extra: [String: JSONValue] { get set }
}

extension NightscoutDocument {
    /// Direct access to the common fields (`doc.identifier`, `doc.date`, …).
    public subscript<T>(dynamicMember keyPath: WritableKeyPath<CommonFields, T>) -> T {
        get { common[keyPath: keyPath] }
        set { common[keyPath: keyPath] = newValue }
    }

    /// Read-only access to computed common properties (`doc.isDeleted`, `doc.primaryKey`, …).
    public subscript<T>(dynamicMember keyPath: KeyPath<CommonFields, T>) -> T {
        common[keyPath: keyPath]
    }
}
