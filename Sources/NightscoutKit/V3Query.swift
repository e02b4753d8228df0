import Foundation

/// The API v3 collections (spec §3).
public enum V3Collection: String, Sendable, Hashable, CaseIterable {
    /// `devicestatus`.
    case devicestatus
    /// `entries`.
    case entries
    /// `food`.
    case food
    /// `profile`.
    case profile
    /// `settings` (search/history need `api:settings:admin`).
    case settings
    /// `treatments`.
    case treatments

    /// The collection path (`/api/v3/entries`).
    public var path: String { NightscoutAPIVersion.v3.pathPrefix + "/" + rawValue }
}

/// A v3 SEARCH (`GET /api/v3/{col}`, spec §3.4). Unlike the server's default (ascending by
/// identifier, limit 1000), it sorts by `date` descending unless told otherwise and always sends
/// `limit`.
public struct V3Search: Sendable, Equatable {
    /// A filter operator (spec §3.4).
    public enum Operator: String, Sendable, CaseIterable {
        /// Equal.
        case eq
        /// Not equal.
        case ne
        /// Greater than.
        case gt
        /// Greater than or equal.
        case gte
        /// Less than.
        case lt
        /// Less than or equal.
        case lte
        /// In a `|`-separated list (values stay strings).
        case `in`
        /// Not in a `|`-separated list.
        case nin
        /// Regular expression.
        case re
    }

    /// One filter: `<field>$<op>=<value>`.
    public struct Filter: Sendable, Equatable {
        /// Field name.
        public var field: String
        /// Operator.
        public var op: Operator
        /// Value as sent (numeric text is compared as a number unless wrapped in single quotes).
        public var value: String
        /// Creates a filter.
        public init(_ field: String, _ op: Operator = .eq, _ value: String) { self.field = field; self.op = op; self.value = value }
    }

    /// Reserved parameter names that cannot be filter fields.
    public static let reservedNames: Set<String> = ["token", "sort", "sort$desc", "limit", "skip", "fields", "now"]

    /// The collection.
    public var collection: V3Collection
    /// Inclusive lower bound on the collection's time (``dateField(_:)``).
    public var from: Date?
    /// Inclusive upper bound on the collection's time.
    public var through: Date?
    /// Page size, 1…1000 (the server's `API3_MAX_LIMIT` default).
    public var limit: Int
    /// Documents to skip.
    public var skip: Int
    /// Sort field (default: the collection's time, ``dateField(_:)``; `date` is read as that).
    public var sortField: String
    /// Sort descending (default `true`: newest first).
    public var descending: Bool
    /// Further filters (ANDed).
    public var filters: [Filter]
    /// Fields to return (`nil`: all).
    public var fields: [String]?

    /// Creates a search.
    /// - Throws: `NightscoutError.invalidRequest` for a limit outside 1…1000, a negative skip,
    ///   a filter on a reserved name, or bounds out of order.
    public init(collection: V3Collection, from: Date? = nil, through: Date? = nil, limit: Int, skip: Int = 0,
                sortField: String = "date", descending: Bool = true, filters: [Filter] = [], fields: [String]? = nil) throws {
        guard (1...1000).contains(limit) else { throw NightscoutError.invalidRequest("limit must be 1…1000") }
        guard skip >= 0 else { throw NightscoutError.invalidRequest("skip must not be negative") }
        if let f = filters.first(where: { V3Search.reservedNames.contains($0.field) || $0.field.isEmpty }) {
            throw NightscoutError.invalidRequest("cannot filter on reserved parameter \(f.field)")
        }
        if let from, let through, through < from { throw NightscoutError.invalidRequest("upper date bound is before lower bound") }
        self.collection = collection; self.from = from; self.through = through; self.limit = limit; self.skip = skip
        self.sortField = sortField == "date" ? Self.dateField(collection) : sortField
        self.descending = descending; self.filters = filters; self.fields = fields
    }

    /// The field a collection's time lives in for every document: `date` for entries,
    /// `created_at` for the others (spec §2.1). Documents written through API v1 (as Loop and most
    /// uploaders do) have no `date` field in storage, so a bound or sort on `date` would miss them.
    public static func dateField(_ collection: V3Collection) -> String { collection == .entries ? "date" : "created_at" }

    /// The query items in a fixed order: date bounds, filters, sort, limit, skip, fields.
    public var queryItems: [(String, String)] {
        var items: [(String, String)] = []
        let field = Self.dateField(collection)
        func bound(_ d: Date) -> String {
            field == "date" ? String(NightscoutDate(d).epochMilliseconds) : NightscoutDate(d).isoString
        }
        if let from { items.append((field + "$gte", bound(from))) }
        if let through { items.append((field + "$lte", bound(through))) }
        for f in filters { items.append((f.op == .eq ? f.field : f.field + "$" + f.op.rawValue, f.value)) }
        items.append((descending ? "sort$desc" : "sort", sortField))
        items.append(("limit", String(limit)))
        if skip > 0 { items.append(("skip", String(skip))) }
        if let fields { items.append(("fields", fields.joined(separator: ","))) }
        return items
    }

    /// The GET request with `Authorization: Bearer <jwt>`.
    public func request(for configuration: NightscoutConfiguration, jwt: String) -> NightscoutRequest {
        let url = configuration.url(path: collection.path, percentEncodedQuery: NightscoutRequest.encodeQuery(queryItems))
        return NightscoutRequest(method: "GET", url: url, headers: V3Search.headers(configuration, jwt: jwt))
    }

    /// The headers of every v3 request: `Accept`, `User-Agent`, `Authorization: Bearer`.
    public static func headers(_ configuration: NightscoutConfiguration, jwt: String) -> [NightscoutRequest.Header] {
        [NightscoutRequest.Header(name: "Accept", value: "application/json"),
         NightscoutRequest.Header(name: "User-Agent", value: configuration.userAgent),
         NightscoutRequest.Header(name: "Authorization", value: "Bearer " + jwt)]
    }
}

/// v3 HISTORY requests (spec §3.11).
public enum V3History {
    /// The earliest watermark the server accepts (2000-01-01T00:00:00Z); smaller values give 400.
    public static let beginningOfTime: Int64 = 946_684_800_000

    /// `GET /api/v3/{col}/history/{lastModified}?limit=…`, returning documents with
    /// `srvModified` > `lastModified` (clamped to `beginningOfTime`).
    public static func request(collection: V3Collection, after lastModified: Int64, limit: Int,
                               configuration: NightscoutConfiguration, jwt: String) throws -> NightscoutRequest {
        guard (1...1000).contains(limit) else { throw NightscoutError.invalidRequest("limit must be 1…1000") }
        let mark = max(lastModified, beginningOfTime)
        let url = configuration.url(path: collection.path + "/history/" + String(mark),
                                    percentEncodedQuery: NightscoutRequest.encodeQuery([("limit", String(limit))]))
        return NightscoutRequest(method: "GET", url: url, headers: V3Search.headers(configuration, jwt: jwt))
    }
}
