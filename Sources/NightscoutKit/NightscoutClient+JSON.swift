import Foundation

/// Raw JSON access for hosts that decode bodies themselves (the Lua module decodes them straight
/// into Lua tables, keeping every field exactly as the server sent it). Same credentials, JWT
/// refresh and error mapping as the typed calls.
extension NightscoutClient {
    /// Sends a v1 request and returns the body of a 2xx answer.
    /// - Parameters:
    ///   - path: the path under `/api/v1` (`/entries.json`, `/treatments`).
    ///   - query: query items, not yet percent-encoded.
    ///   - body: a JSON body (sets `Content-Type: application/json`).
    public func v1JSON(_ method: String, _ path: String, query: [(String, String)] = [], body: Data? = nil) async throws -> Data {
        try await sendV1(v1Request(method, path, query: query, body: body)).body
    }

    /// Sends a v3 request and returns the answer after checking it: 2xx, or 304 when the
    /// request was conditional (`If-Modified-Since`).
    /// - Parameters:
    ///   - path: the full path (`/api/v3/entries`, `/api/v3/lastModified`).
    ///   - query: query items, not yet percent-encoded.
    ///   - body: a JSON body (sets `Content-Type: application/json`).
    ///   - headers: extra headers (`If-Modified-Since`, `If-Unmodified-Since`).
    public func v3JSON(_ method: String, _ path: String, query: [(String, String)] = [], body: Data? = nil,
                       headers: [NightscoutRequest.Header] = []) async throws -> NightscoutHTTPResponse {
        let response = try await sendV3 { [self] jwt in v3Request(method, path, query: query, body: body, headers: headers, jwt: jwt) }
        if response.status != 304 { try NightscoutResponse.check(response) }
        return response
    }

    /// `POST /api/v3/{collection}` with a document already encoded as JSON. `identifier` is the
    /// document's own, used if the answer names none.
    public func create(_ collection: V3Collection, json body: Data, identifier known: String? = nil) async throws -> V3CreateResult {
        let response = try await sendV3 { [self] jwt in v3Request("POST", collection.path, body: body, jwt: jwt) }
        let result = try NightscoutResponse.decodeV3Write(from: response)
        let location = response.header("Location").flatMap { $0.split(separator: "/").last.map(String.init) }
        guard let identifier = result.identifier ?? location ?? known else {
            throw NightscoutError.decoding("create response has no identifier")
        }
        return V3CreateResult(identifier: identifier,
                              isDeduplicated: result.isDeduplication ?? (result.status == 200),
                              deduplicatedIdentifier: result.deduplicatedIdentifier, lastModified: result.lastModified)
    }

    /// `PUT /api/v3/{collection}/{identifier}` with a document already encoded as JSON.
    public func update(_ collection: V3Collection, identifier: String, json body: Data) async throws -> V3WriteResult {
        let path = collection.path + "/" + NightscoutRequest.percentEncode(identifier)
        let response = try await sendV3 { [self] jwt in v3Request("PUT", path, body: body, jwt: jwt) }
        return try NightscoutResponse.decodeV3Write(from: response)
    }

    /// `PATCH /api/v3/{collection}/{identifier}` with the fields already encoded as a JSON object.
    public func patch(_ collection: V3Collection, identifier: String, json body: Data) async throws {
        let path = collection.path + "/" + NightscoutRequest.percentEncode(identifier)
        _ = try await v3JSON("PATCH", path, body: body)
    }
}
