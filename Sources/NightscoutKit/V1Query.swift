import Foundation

/// The v1 collections that support time-bounded queries (spec §2.1).
public enum V1Collection: String, Sendable, Hashable, CaseIterable {
    /// `entries`: date field `date` (epoch ms, coerced to a number by the server).
    case entries
    /// `treatments`: date field `created_at` (ISO).
    case treatments
    /// `devicestatus`: date field `created_at` (ISO).
    case devicestatus
    /// `profiles` (query form of profile): date field `startDate` (ISO).
    case profiles

    /// The field the server applies its default 4-day window to.
    public var dateField: String {
        switch self {
        case .entries: return "date"
        case .treatments, .devicestatus: return "created_at"
        case .profiles: return "startDate"
        }
    }

    /// The request path under `/api/v1`.
    public var path: String {
        switch self {
        case .profiles: return "/profiles"
        default: return "/" + rawValue + ".json"
        }
    }

    /// The value of a date bound as the server compares it: epoch ms for `entries`, UTC ISO with
    /// milliseconds otherwise.
    public func boundValue(_ date: Date) -> String {
        let d = NightscoutDate(date)
        return self == .entries ? String(d.epochMilliseconds) : d.isoString
    }
}

/// A v1 read with explicit bounds (spec §2.1). The server silently limits queries without a
/// date bound to the last 4 days and applies small default counts (entries and device status 10,
/// treatments 100); a `V1Query` therefore always sends a lower date bound and a `count`.
/// Results come newest first; to read further back use `continuing(before:)`.
public struct V1Query: Sendable, Equatable {
    /// The collection.
    public var collection: V1Collection
    /// Inclusive lower bound (`$gte`); required.
    public var from: Date
    /// Inclusive upper bound (`$lte`), if any.
    public var through: Date?
    /// Maximum number of documents (`count`), sent always.
    public var count: Int
    /// Additional equality filters (`find[field]=value`), e.g. `type` = `sgv` or `eventType`.
    public var filters: [String: String]

    /// Creates a query.
    /// - Throws: `NightscoutError.invalidRequest` when `count` < 1 or `through` < `from`.
    public init(collection: V1Collection, from: Date, through: Date? = nil, count: Int, filters: [String: String] = [:]) throws {
        guard count >= 1 else { throw NightscoutError.invalidRequest("count must be at least 1") }
        if let through, through < from { throw NightscoutError.invalidRequest("upper date bound is before lower bound") }
        self.collection = collection; self.from = from; self.through = through; self.count = count; self.filters = filters
    }

    /// Entries of one `type` (e.g. `.sgv`) between the bounds.
    public static func entries(type: EntryType? = nil, from: Date, through: Date? = nil, count: Int) throws -> V1Query {
        try V1Query(collection: .entries, from: from, through: through, count: count,
                    filters: type.map { ["type": $0.rawValue] } ?? [:])
    }

    /// Treatments (optionally of one event type) between the bounds.
    public static func treatments(eventType: EventType? = nil, from: Date, through: Date? = nil, count: Int) throws -> V1Query {
        try V1Query(collection: .treatments, from: from, through: through, count: count,
                    filters: eventType.map { ["eventType": $0.rawValue] } ?? [:])
    }

    /// The query string items, in a fixed order: date bounds, filters (sorted by name), count.
    public var queryItems: [(String, String)] {
        let field = collection.dateField
        var items: [(String, String)] = [("find[\(field)][$gte]", collection.boundValue(from))]
        if let through { items.append(("find[\(field)][$lte]", collection.boundValue(through))) }
        for key in filters.keys.sorted() { items.append(("find[\(key)]", filters[key]!)) }
        items.append(("count", String(count)))
        return items
    }

    /// The next older page after a page whose oldest document has time `oldest`: same lower
    /// bound, upper bound = `oldest` (inclusive, so documents sharing that instant are not lost;
    /// drop the repeats by `_id`). `nil` when `oldest` is before `from`.
    public func continuing(before oldest: Date) -> V1Query? {
        guard oldest >= from else { return nil }
        var next = self
        next.through = oldest
        return next
    }

    /// The GET request for this query on `configuration`'s site with v1 authentication headers.
    public func request(for configuration: NightscoutConfiguration) -> NightscoutRequest {
        let url = configuration.url(path: NightscoutAPIVersion.v1.pathPrefix + collection.path,
                                    percentEncodedQuery: NightscoutRequest.encodeQuery(queryItems))
        return NightscoutRequest(method: "GET", url: url, headers: V1Query.headers(configuration))
    }

    /// The headers of every v1 request: `Accept`, `User-Agent` and the credentials' headers.
    public static func headers(_ configuration: NightscoutConfiguration) -> [NightscoutRequest.Header] {
        [NightscoutRequest.Header(name: "Accept", value: "application/json"),
         NightscoutRequest.Header(name: "User-Agent", value: configuration.userAgent)]
            + configuration.credentials.v1Headers.map { NightscoutRequest.Header(name: $0.name, value: $0.value) }
    }
}
