import Foundation
import LookoutWire

extension NightscoutClient {
    // MARK: - v3 documents

    /// `POST /api/v3/{collection}` with one document. Without an `identifier` the server computes
    /// one (spec §3.9) and may deduplicate onto an existing document.
    public func create<D: NightscoutDocument>(_ collection: V3Collection, _ document: D) async throws -> V3CreateResult {
        try await create(collection, json: try NightscoutClient.encode(document), identifier: document.common.identifier)
    }

    /// `GET /api/v3/{collection}/{identifier}`. Returns `nil` when `ifModifiedSince` is given and
    /// the document has not changed since (304, second precision).
    /// - Throws: `NightscoutError.http` with status 404 (absent) or 410 (soft-deleted).
    public func read<D: NightscoutDocument>(_ type: D.Type, _ collection: V3Collection, identifier: String,
                                            ifModifiedSince: Date? = nil) async throws -> D? {
        let extra = ifModifiedSince.map { [NightscoutRequest.Header(name: "If-Modified-Since", value: HTTPDate.format($0))] } ?? []
        let path = collection.path + "/" + NightscoutRequest.percentEncode(identifier)
        let response = try await sendV3 { [self] jwt in v3Request("GET", path, headers: extra, jwt: jwt) }
        if response.status == 304 { return nil }
        return try NightscoutResponse.decodeV3(D.self, from: response)
    }

    /// One page of `GET /api/v3/{collection}` (soft-deleted documents excluded).
    public func search<D: NightscoutDocument>(_ type: D.Type, _ search: V3Search) async throws -> [D] {
        let configuration = self.configuration
        let response = try await sendV3 { jwt in search.request(for: configuration, jwt: jwt) }
        return try NightscoutResponse.decodeV3Documents(D.self, from: response)
    }

    /// Every document matching `search`, fetched page by page (`limit` per page, advancing
    /// `skip`) until a short page. Documents written while paging may be skipped or repeated;
    /// use `history` for consistent synchronisation.
    public func searchAll<D: NightscoutDocument>(_ type: D.Type, _ search: V3Search) -> AsyncThrowingStream<D, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var page = search
                    while true {
                        try Task.checkCancellation()
                        let docs = try await self.search(D.self, page)
                        for d in docs { continuation.yield(d) }
                        if docs.count < page.limit { break }
                        page.skip += page.limit
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// One page of `GET /api/v3/{collection}/history/{cursor.requestValue}`: documents changed
    /// after the cursor in `srvModified` order, including soft deletions. Documents written only
    /// through v1 never appear (they have no stored `srvModified`, spec §3.11).
    public func historyPage<D: NightscoutDocument>(_ type: D.Type, _ collection: V3Collection,
                                                   since cursor: HistoryCursor = HistoryCursor(),
                                                   limit: Int = 1000) async throws -> V3HistoryPage<D> {
        let configuration = self.configuration
        let after = cursor.requestValue
        let response = try await sendV3 { jwt in
            try V3History.request(collection: collection, after: after, limit: limit, configuration: configuration, jwt: jwt)
        }
        let docs = try NightscoutResponse.decodeV3Documents(D.self, from: response)
        return V3HistoryPaging.page(docs, cursor: cursor, limit: limit)
    }

    /// All history pages after `cursor`, each with the cursor to persist after applying it.
    ///
    /// While a full page is being decoded, the next one is already requested from the page's
    /// `ETag` (`W/"<max srvModified>"`, spec §3.11): the request the cursor will make next, as
    /// `ETag − 1`. The prefetched response is used only when the cursor after the page asks for
    /// exactly that value; otherwise it is dropped and the cursor's request is sent, so the pages
    /// are the same as with `historyPage` one at a time.
    public func history<D: NightscoutDocument>(_ type: D.Type, _ collection: V3Collection,
                                               since cursor: HistoryCursor = HistoryCursor(),
                                               limit: Int = 1000) -> AsyncThrowingStream<V3HistoryPage<D>, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                let configuration = self.configuration
                let fetch: @Sendable (Int64) async throws -> NightscoutHTTPResponse = { after in
                    try await self.sendV3 { jwt in
                        try V3History.request(collection: collection, after: after, limit: limit,
                                              configuration: configuration, jwt: jwt)
                    }
                }
                var prefetch: (after: Int64, task: Task<NightscoutHTTPResponse, any Error>)? = nil
                do {
                    var current = cursor
                    while true {
                        try Task.checkCancellation()
                        let after = current.requestValue
                        let response: NightscoutHTTPResponse
                        if let p = prefetch, p.after == after {
                            prefetch = nil
                            response = try await withTaskCancellationHandler {
                                try await p.task.value
                            } onCancel: {
                                p.task.cancel()
                            }
                        } else {
                            prefetch?.task.cancel()
                            prefetch = nil
                            response = try await fetch(after)
                        }
                        try NightscoutResponse.check(response)
                        if let count = V3PageScanner.resultCountHint(response.body),
                           HistoryCursor.hasMore(pageCount: count, limit: limit),
                           let etag = NightscoutResponse.historyETag(response), etag > V3History.beginningOfTime {
                            let next = etag - 1
                            prefetch = (next, Task { try await fetch(next) })
                            // Let the prefetch send its request before this task decodes: when the
                            // other cooperative threads are busy (2 on a 2-core box) it otherwise
                            // starts only after the decoding (2 of 8 pages of a traced sync).
                            await Task.yield()
                        }
                        let docs = try NightscoutResponse.decodeV3Documents(D.self, from: response)
                        let page = V3HistoryPaging.page(docs, cursor: current, limit: limit)
                        continuation.yield(page)
                        current = page.cursor
                        if !page.hasMore { break }
                    }
                    prefetch?.task.cancel()
                    continuation.finish()
                } catch {
                    prefetch?.task.cancel()
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// `PUT /api/v3/{collection}/{identifier}`: full replace (fields absent from `document` are
    /// removed) or insert when absent.
    public func update<D: NightscoutDocument>(_ collection: V3Collection, identifier: String, _ document: D) async throws
        -> V3WriteResult
    {
        try await update(collection, identifier: identifier, json: try NightscoutClient.encode(document))
    }

    /// `PATCH /api/v3/{collection}/{identifier}`: sets the given fields.
    public func patch(_ collection: V3Collection, identifier: String, fields: [String: JSONValue]) async throws {
        guard !fields.isEmpty else { throw NightscoutError.invalidRequest("patch needs at least one field") }
        try await patch(collection, identifier: identifier, json: try NightscoutClient.encode(fields))
    }

    /// `DELETE /api/v3/{collection}/{identifier}`: soft delete (visible in HISTORY with
    /// `isValid: false`), or physical when `permanent`.
    public func delete(_ collection: V3Collection, identifier: String, permanent: Bool = false) async throws {
        guard !identifier.isEmpty else { throw NightscoutError.invalidRequest("delete needs an identifier") }
        let path = collection.path + "/" + NightscoutRequest.percentEncode(identifier)
        let query: [(String, String)] = permanent ? [("permanent", "true")] : []
        let response = try await sendV3 { [self] jwt in v3Request("DELETE", path, query: query, jwt: jwt) }
        try NightscoutResponse.check(response)
    }

    // MARK: - v3 server information

    /// `GET /api/v3/lastModified`: the latest change per readable collection.
    public func lastModified() async throws -> V3LastModified {
        let response = try await sendV3 { [self] jwt in v3Request("GET", NightscoutAPIVersion.v3.pathPrefix + "/lastModified", jwt: jwt) }
        return try NightscoutResponse.decodeV3(V3LastModified.self, from: response)
    }

    /// `GET /api/v3/version` (no authentication needed).
    public func version() async throws -> V3Version {
        let url = configuration.url(path: NightscoutAPIVersion.v3.pathPrefix + "/version")
        let request = NightscoutRequest(method: "GET", url: url, headers: [
            .init(name: "Accept", value: "application/json"), .init(name: "User-Agent", value: configuration.userAgent)])
        return try NightscoutResponse.decodeV3(V3Version.self, from: try await send(request))
    }

    /// `GET /api/v3/status`: version and the caller's permissions (needs a valid JWT).
    public func v3Status() async throws -> V3Status {
        let response = try await sendV3 { [self] jwt in v3Request("GET", NightscoutAPIVersion.v3.pathPrefix + "/status", jwt: jwt) }
        return try NightscoutResponse.decodeV3(V3Status.self, from: response)
    }
}
