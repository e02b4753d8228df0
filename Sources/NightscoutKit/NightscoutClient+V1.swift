import Foundation

extension NightscoutClient {
    // MARK: - v1 reads

    /// Entries matching `query` (newest first). The query always sends a date bound and a count,
    /// so the server's 4-day window and default count of 10 do not apply.
    public func entries(_ query: V1Query) async throws -> [Entry] {
        try await v1Documents(query, expecting: .entries)
    }

    /// Treatments matching `query` (newest first by `created_at`).
    public func treatments(_ query: V1Query) async throws -> [Treatment] {
        try await v1Documents(query, expecting: .treatments)
    }

    /// Device statuses matching `query` (newest first by `created_at`).
    public func devicestatus(_ query: V1Query) async throws -> [DeviceStatus] {
        try await v1Documents(query, expecting: .devicestatus)
    }

    /// All profile sets (`GET /api/v1/profile.json`, newest `startDate` first, server default count 10).
    public func profile() async throws -> [ProfileSet] {
        let response = try await sendV1(v1Request("GET", "/profile.json"))
        return try NightscoutResponse.decodeV1([ProfileSet].self, from: response)
    }

    /// `GET /api/v1/status.json` (needs `api:status:read`).
    public func status() async throws -> V1ServerStatus {
        let response = try await sendV1(v1Request("GET", "/status.json"))
        return try NightscoutResponse.decodeV1(V1ServerStatus.self, from: response)
    }

    /// `GET /api/v1/verifyauth`: what the configured credentials allow. Always answered with 200
    /// by the server; check `isAuthenticated`.
    public func verifyAuth() async throws -> V1AuthVerification {
        let response = try await sendV1(v1Request("GET", "/verifyauth"))
        return try NightscoutResponse.decodeV1(V1AuthVerification.self, from: response)
    }

    private func v1Documents<D: NightscoutDocument>(_ query: V1Query, expecting collection: V1Collection) async throws -> [D] {
        guard query.collection == collection else {
            throw NightscoutError.invalidRequest("query is for \(query.collection.rawValue), not \(collection.rawValue)")
        }
        let response = try await sendV1(query.request(for: configuration))
        return try NightscoutResponse.decodeV1([D].self, from: response)
    }

    // MARK: - v1 paging

    /// Every entry matching `query`, newest first, fetched in pages of `query.count` by moving
    /// the upper date bound to the oldest time seen (`V1Query.continuing(before:)`); documents
    /// repeated at a page boundary are dropped by `_id`. Paging stops early if more than
    /// `query.count` documents share one instant (use a larger `count` for such data).
    public func allEntries(_ query: V1Query) -> AsyncThrowingStream<Entry, any Error> {
        v1Pages(query) { (q: V1Query) in try await self.entries(q) }
    }

    /// Every treatment matching `query`, newest first (see `allEntries`).
    public func allTreatments(_ query: V1Query) -> AsyncThrowingStream<Treatment, any Error> {
        v1Pages(query) { (q: V1Query) in try await self.treatments(q) }
    }

    /// Every device status matching `query`, newest first (see `allEntries`).
    public func allDeviceStatus(_ query: V1Query) -> AsyncThrowingStream<DeviceStatus, any Error> {
        v1Pages(query) { (q: V1Query) in try await self.devicestatus(q) }
    }

    private func v1Pages<D: NightscoutDocument>(_ query: V1Query, fetch: @escaping @Sendable (V1Query) async throws -> [D])
        -> AsyncThrowingStream<D, any Error>
    {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var next: V1Query? = query
                    var seenAtBoundary: Set<String> = []
                    while let q = next {
                        try Task.checkCancellation()
                        let page = try await fetch(q)
                        var fresh = 0
                        var oldest: NightscoutDate?
                        var idsAtOldest: Set<String> = []
                        for doc in page {
                            let time = (doc as? Entry)?.time ?? doc.common.eventTime
                            if let time {
                                if oldest == nil || time < oldest! { oldest = time; idsAtOldest = [] }
                                if time == oldest, let id = doc.common.id { idsAtOldest.insert(id) }
                            }
                            if let id = doc.common.id, seenAtBoundary.contains(id) { continue }
                            fresh += 1
                            continuation.yield(doc)
                        }
                        guard page.count >= q.count, fresh > 0, let oldest else { break }
                        seenAtBoundary = idsAtOldest
                        next = q.continuing(before: oldest.date)
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: - v1 uploads

    /// `POST /api/v1/entries` with `entries` (upsert by `sysTime` + `type`). Needs create permission.
    public func upload(entries: [Entry]) async throws {
        guard !entries.isEmpty else { return }
        _ = try await sendV1(try V1Write.postEntries(entries, configuration: configuration))
    }

    /// `POST /api/v1/treatments` with `treatments`. Needs create permission.
    public func upload(treatments: [Treatment]) async throws {
        guard !treatments.isEmpty else { return }
        _ = try await sendV1(try V1Write.postTreatments(treatments, configuration: configuration))
    }

    /// `POST /api/v1/devicestatus` with `statuses`. Needs create permission.
    public func upload(deviceStatuses statuses: [DeviceStatus]) async throws {
        guard !statuses.isEmpty else { return }
        _ = try await sendV1(try V1Write.postDeviceStatus(statuses, configuration: configuration))
    }
}
