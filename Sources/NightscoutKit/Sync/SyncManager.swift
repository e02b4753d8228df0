import Foundation
import LookoutWire

extension NightscoutConfiguration {
    /// The key a `SyncManager` files this site's mirror under: `scheme://host[:port][/path]` with
    /// scheme and host lowercased, the default port (80/443) dropped, no credentials, query or
    /// trailing slash (e.g. `https://my.ns.example/ns`). Different credentials for one site share
    /// the key.
    public var syncSiteKey: String {
        let components = URLComponents(url: siteURL, resolvingAgainstBaseURL: false)
        let scheme = (components?.scheme ?? "https").lowercased()
        let host = (components?.host ?? "").lowercased()
        var key = scheme + "://" + host
        if let port = components?.port, !(scheme == "https" && port == 443) && !(scheme == "http" && port == 80) {
            key += ":" + String(port)
        }
        var path = components?.percentEncodedPath ?? ""
        while path.hasSuffix("/") { path.removeLast() }
        return key + path
    }
}

/// Keeps a local mirror of a Nightscout site's collections in a `SyncStore`.
///
/// * `sync(_:)` reads v3 HISTORY after the stored cursor, page by page. Each page's documents and
///   the advanced cursor are stored in one `SyncStore.apply` call, so an interrupted sync (error,
///   cancellation, crash) resumes after the last stored page without gaps or repeats.
/// * `fullSync(_:from:through:)` first syncs history (API v3), then reads the date range by search
///   (v3 SEARCH, or v1 when the client resolved to v1) to find what history never shows —
///   documents written through API v1 have no `srvModified` and never appear in v3 history (spec
///   §3.11) — and mirror documents the server no longer has.
/// * Soft deletions are kept in the mirror as tombstones (`isValid == false`); mirror reads
///   exclude them by default.
/// * Cancellation: a cancelled task stops before the next page, having stored whole pages only,
///   and throws `CancellationError`.
///
/// The manager never runs two operations on one collection at once (the second throws
/// `NightscoutError.invalidRequest`).
public actor SyncManager {
    /// The client.
    public nonisolated let client: NightscoutClient
    /// The store holding cursors and mirrors.
    public nonisolated let store: any SyncStore
    /// The site key the mirror is filed under (default: `client.configuration.syncSiteKey`).
    public nonisolated let site: String
    /// Documents per page (1…1000) for history and search.
    public nonisolated let pageLimit: Int

    private var running: Set<V3Collection> = []

    /// Creates a manager.
    /// - Parameters:
    ///   - client: the client of the site.
    ///   - store: where cursors and mirrored documents live.
    ///   - pageLimit: documents per page, 1…1000 (default 1000, the server maximum).
    ///   - site: the site key; default `client.configuration.syncSiteKey`.
    /// - Throws: `NightscoutError.invalidRequest` for a page limit outside 1…1000.
    public init(client: NightscoutClient, store: any SyncStore, pageLimit: Int = 1000, site: String? = nil) throws {
        guard (1...1000).contains(pageLimit) else { throw NightscoutError.invalidRequest("page limit must be 1…1000") }
        self.client = client
        self.store = store
        self.pageLimit = pageLimit
        self.site = site ?? client.configuration.syncSiteKey
    }

    /// Pulls v3 history of `collection` after the stored cursor and mirrors it.
    /// - Parameter progress: called after every stored page.
    /// - Returns: what changed; `cursor` is the stored cursor at the end.
    /// - Throws: `CancellationError` when the task is cancelled (whole pages stay stored), a
    ///   `NightscoutError` from the client (e.g. `.unsupportedCredentials` when the client cannot
    ///   use API v3), or the store's error.
    public func sync(_ collection: V3Collection, progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws -> SyncReport {
        try begin(collection)
        defer { running.remove(collection) }
        var run = Run(site: site, collection: collection, progress: progress)
        try await history(&run)
        return run.finish()
    }

    /// A first sync, and the repair of what history does not cover: syncs history (when the client
    /// uses API v3), then reads every document of `collection` dated in `from...through` by search
    /// (v3 SEARCH on `date` for entries and `created_at` otherwise; v1 reads when the client resolved
    /// to v1) and stores those the mirror lacks or holds with another `srvModified`.
    ///
    /// Server documents the mirror lacked are listed in `missedByHistory` (and `added`); live mirror
    /// documents in the range the server did not return are listed in `missingOnServer` and left
    /// in the mirror. Search pages by `skip`, so documents written meanwhile may be missed or
    /// reported missing; run it again to confirm.
    /// - Throws: like `sync`; `NightscoutError.invalidRequest` for bounds out of order, or for
    ///   `food`/`settings` when the client uses v1 (no v1 date query for them).
    public func fullSync(_ collection: V3Collection, from: Date, through: Date,
                         progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws -> SyncReport {
        guard from <= through else { throw NightscoutError.invalidRequest("upper date bound is before lower bound") }
        try begin(collection)
        defer { running.remove(collection) }
        var run = Run(site: site, collection: collection, progress: progress)
        let api = try await client.resolvedAPI()
        if api == .v3 {
            try await history(&run)
        } else {
            run.report.cursor = try await store.cursor(site: site, collection: collection)
        }
        run.report.reconciledWith = api
        var seen = Set<String>()
        if api == .v3 {
            try await reconcileV3(&run, from: from, through: through, seen: &seen)
        } else {
            try await reconcileV1(&run, from: from, through: through, seen: &seen)
        }
        let mirrored = try await store.identifiers(site: site, collection: collection,
                                                   from: NightscoutDate(from).epochMilliseconds,
                                                   through: NightscoutDate(through).epochMilliseconds)
        run.report.missingOnServer = mirrored.subtracting(seen).sorted()
        return run.finish()
    }

    /// The mirror's live documents of `collection` dated in `from...through` (open when `nil`),
    /// newest first, at most `limit`, as the server's raw JSON.
    public func mirror(_ collection: V3Collection, from: Date? = nil, through: Date? = nil, limit: Int? = nil,
                       includeDeleted: Bool = false) async throws -> [Data] {
        try await store.documents(site: site, collection: collection,
                                  from: from.map { NightscoutDate($0).epochMilliseconds },
                                  through: through.map { NightscoutDate($0).epochMilliseconds },
                                  limit: limit, includeDeleted: includeDeleted)
    }

    // MARK: - Running

    private func begin(_ collection: V3Collection) throws {
        guard running.insert(collection).inserted else {
            throw NightscoutError.invalidRequest("a sync of \(collection.rawValue) is already running")
        }
    }

    /// The state of one operation.
    private struct Run {
        var report: SyncReport
        let progress: (@Sendable (SyncProgress) -> Void)?
        let clock = ContinuousClock()
        let started: ContinuousClock.Instant

        init(site: String, collection: V3Collection, progress: (@Sendable (SyncProgress) -> Void)?) {
            report = SyncReport(site: site, collection: collection)
            self.progress = progress
            started = clock.now
        }

        var elapsed: TimeInterval {
            let d = clock.now - started
            return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        }

        func tell(_ phase: SyncProgress.Phase) {
            guard let progress else { return }
            let t = elapsed
            progress(SyncProgress(collection: report.collection, phase: phase, pages: report.pages,
                                  documents: report.documents,
                                  documentsPerSecond: t > 0 ? Double(report.documents) / t : 0, cursor: report.cursor))
        }

        mutating func finish() -> SyncReport {
            report.duration = elapsed
            return report
        }
    }

    /// Fetches with task cancellation surfacing as `CancellationError` whatever the transport throws.
    private func fetch<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try Task.checkCancellation()
        do { return try await body() } catch {
            if Task.isCancelled { throw CancellationError() }
            throw error
        }
    }

    /// Sorts `documents` into the report by comparing with the mirror, and returns those to store.
    private func classify(_ documents: [MirrorDocument], _ run: inout Run, reconciling: Bool) async throws -> [MirrorDocument] {
        guard !documents.isEmpty else { return [] }
        let states = try await store.states(site: site, collection: run.report.collection,
                                            identifiers: documents.map(\.identifier))
        var changed: [MirrorDocument] = []
        for var d in documents {
            d.srvModified = Self.canonicalSrvModified(d, collection: run.report.collection)
            let old = states[d.identifier]
            if !d.isValid {
                if let old, !old.isValid, old.srvModified == d.srvModified { run.report.unchanged += 1; continue }
                run.report.deleted.append(d.identifier)
            } else if let old, old.isValid {
                if old.srvModified == d.srvModified { run.report.unchanged += 1; continue }
                run.report.updated.append(d.identifier)
            } else {
                run.report.added.append(d.identifier)
                if reconciling { run.report.missedByHistory.append(d.identifier) }
            }
            changed.append(d)
        }
        return changed
    }

    /// `srvModified` as API v3 shows it, so that one document has one form in the mirror
    /// whatever API it came through: the stored one, else (a document written through v1 and
    /// read through v1, which has none) the time v3 shows in its place (`fallbackGetDate`: `date`
    /// for entries, `created_at` for the other collections, none for settings). Without it every
    /// switch between a v1 and a v3 full sync reported each v1-written document as updated.
    static func canonicalSrvModified(_ d: MirrorDocument, collection: V3Collection) -> Int64? {
        if let stored = d.srvModified { return stored }
        switch collection {
        case .settings: return nil
        case .entries: return Self.topLevelTime("date", in: d.raw)
        default: return Self.topLevelTime("created_at", in: d.raw)
        }
    }

    /// A top-level time field of a document's JSON (epoch ms or a date string), if it parses.
    private static func topLevelTime(_ key: String, in raw: Data) -> Int64? {
        guard let value = (try? JSONParser.parse(raw))?[key] else { return nil }
        if let s = value.stringValue { return NightscoutDate(string: s)?.epochMilliseconds }
        return value.doubleValue.flatMap(NightscoutDate.milliseconds)
    }

    // MARK: - History

    private func history(_ run: inout Run) async throws {
        let collection = run.report.collection
        var cursor = try await store.cursor(site: site, collection: collection) ?? HistoryCursor()
        run.report.cursor = cursor
        let client = self.client, limit = pageLimit
        while true {
            let request = cursor.requestValue
            let response = try await fetch {
                try await client.v3JSON("GET", collection.path + "/history/" + String(request), query: [("limit", String(limit))])
            }
            let (documents, count) = try MirrorDocument.scan(response.body, envelope: true)
            var next = cursor
            let fresh = documents.filter { next.accept(srvModified: $0.srvModified, identifier: $0.identifier) }
            let progressed = next != cursor || !fresh.isEmpty
            if progressed {
                var pending = run
                let changed = try await classify(fresh, &pending, reconciling: false)
                try await store.apply(site: site, collection: collection, documents: changed, cursor: next)
                run = pending
                cursor = next
                run.report.cursor = next
                run.report.documents += fresh.count
            }
            run.report.pages += 1
            run.tell(.history)
            // A full page that moved nothing forward (more than `limit` documents sharing one
            // millisecond, all seen) would repeat forever.
            guard HistoryCursor.hasMore(pageCount: count, limit: limit), progressed else { return }
        }
    }

    // MARK: - Reconciliation

    private func reconcileV3(_ run: inout Run, from: Date, through: Date, seen: inout Set<String>) async throws {
        let collection = run.report.collection
        var search: V3Search
        if collection == .entries {
            search = try V3Search(collection: collection, from: from, through: through, limit: pageLimit)
        } else {
            search = try V3Search(collection: collection, limit: pageLimit, sortField: "created_at", filters: [
                .init("created_at", .gte, NightscoutDate(from).isoString),
                .init("created_at", .lte, NightscoutDate(through).isoString)])
        }
        let client = self.client
        while true {
            let page = search
            let response = try await fetch { try await client.v3JSON("GET", collection.path, query: page.queryItems) }
            let (documents, count) = try MirrorDocument.scan(response.body, envelope: true)
            try await storeReconciled(documents, &run, seen: &seen)
            guard count >= search.limit else { return }
            search.skip += search.limit
        }
    }

    private func reconcileV1(_ run: inout Run, from: Date, through: Date, seen: inout Set<String>) async throws {
        let collection = run.report.collection
        let v1: V1Collection
        switch collection {
        case .entries: v1 = .entries
        case .treatments: v1 = .treatments
        case .devicestatus: v1 = .devicestatus
        case .profile: v1 = .profiles
        case .food, .settings:
            throw NightscoutError.invalidRequest("\(collection.rawValue) cannot be read by date through API v1")
        }
        var query: V1Query? = try V1Query(collection: v1, from: from, through: through, count: pageLimit)
        let client = self.client
        while let page = query {
            let body = try await fetch { try await client.v1JSON("GET", v1.path, query: page.queryItems) }
            let (documents, count) = try MirrorDocument.scan(body, envelope: false)
            let before = seen.count
            try await storeReconciled(documents, &run, seen: &seen)
            // Pages overlap at the oldest instant; stop at a short page, or when a full page held
            // nothing new (more than `count` documents at one instant cannot be paged through v1).
            guard count >= page.count, seen.count > before,
                  let oldest = documents.compactMap(\.date).min() else { return }
            // Half a millisecond later, so the bound truncates back to `oldest` exactly.
            query = page.continuing(before: Date(timeIntervalSince1970: (Double(oldest) + 0.5) / 1000))
        }
    }

    /// Stores one reconciliation page: documents not seen earlier in this pass, classified.
    private func storeReconciled(_ documents: [MirrorDocument], _ run: inout Run, seen: inout Set<String>) async throws {
        let fresh = documents.filter { seen.insert($0.identifier).inserted }
        var pending = run
        let changed = try await classify(fresh, &pending, reconciling: true)
        if !changed.isEmpty {
            try await store.apply(site: site, collection: pending.report.collection, documents: changed, cursor: nil)
        }
        run = pending
        run.report.documents += fresh.count
        run.report.pages += 1
        run.tell(.reconciliation)
    }
}
