import Foundation
import LookoutWire

extension GarminClient {
    /// Sends a Connect API request (`{connectapi}{path}`) with the bearer token, refreshing first
    /// when needed. Idempotent methods (GET, PUT, DELETE, HEAD) are retried on 408/500/502/503/504
    /// and transport failures with garth's backoff; POST and 429 never are. Non-2xx → error.
    public func request(
        _ method: String, _ path: String, query: [(String, String)] = [], jsonBody: Data? = nil
    ) async throws -> GarminHTTPResponse {
        let method = method.uppercased()
        guard path.hasPrefix("/") else { throw GarminError.invalidConfiguration("API path must start with /: \(path.prefix(60))") }
        let url = GarminURL.make(configuration.connectAPI, path, query)
        let idempotent = ["GET", "PUT", "DELETE", "HEAD", "OPTIONS"].contains(method)
        var failures = 0
        while true {
            let token = try await validOAuth2Token()
            var headers = [
                ("User-Agent", configuration.apiUserAgent), ("Authorization", token.authorizationHeader), ("Accept", "*/*"),
            ]
            if jsonBody != nil { headers.append(("Content-Type", "application/json")) }
            let response: GarminHTTPResponse
            do {
                response = try await transport.send(
                    GarminHTTPRequest(method: method, url: url, headers: headers, body: jsonBody), configuration.timeout)
            } catch let e as GarminError {
                guard idempotent, failures < configuration.retries else { throw e }
                failures += 1
                try await backoff(failures)
                continue
            }
            if (200..<300).contains(response.status) { return response }
            if response.status == 429 {
                logger.warning("garmin: rate limited", metadata: ["path": "\(path)"])
                throw GarminError.rateLimited(retryAfter: response.retryAfter)
            }
            if idempotent, [408, 500, 502, 503, 504].contains(response.status), failures < configuration.retries {
                failures += 1
                logger.debug("garmin: retrying", metadata: ["path": "\(path)", "status": "\(response.status)", "attempt": "\(failures)"])
                try await backoff(failures)
                continue
            }
            throw GarminHTTPCheck.error(response, url: url, secrets: [token.accessToken, token.refreshToken])
        }
    }

    /// urllib3's schedule: no wait after the first failure, then `factor · 2^(n−1)` seconds.
    private func backoff(_ failures: Int) async throws {
        guard failures > 1 else { return }
        let seconds = configuration.backoffFactor * pow(2, Double(failures - 1))
        if seconds > 0 { try await Task.sleep(for: .milliseconds(Int64(seconds * 1000))) }
    }

    /// A Connect API call returning parsed JSON; nil for 204 or an empty body.
    public func connectAPI(
        _ path: String, method: String = "GET", query: [(String, String)] = [], jsonBody: JSONValue? = nil
    ) async throws -> JSONValue? {
        let response = try await request(method, path, query: query, jsonBody: jsonBody?.jsonData)
        if response.status == 204 || response.body.isEmpty { return nil }
        return try GarminResponseJSON.parse(response.body)
    }

    /// GET with JSON result.
    public func get(_ path: String, query: [(String, String)] = []) async throws -> JSONValue? {
        try await connectAPI(path, query: query)
    }
    /// POST with a JSON body (never retried).
    public func post(_ path: String, query: [(String, String)] = [], json: JSONValue? = nil) async throws -> JSONValue? {
        try await connectAPI(path, method: "POST", query: query, jsonBody: json)
    }
    /// PUT with a JSON body.
    public func put(_ path: String, query: [(String, String)] = [], json: JSONValue? = nil) async throws -> JSONValue? {
        try await connectAPI(path, method: "PUT", query: query, jsonBody: json)
    }
    /// DELETE.
    public func delete(_ path: String, query: [(String, String)] = []) async throws -> JSONValue? {
        try await connectAPI(path, method: "DELETE", query: query)
    }

    /// A GET decoded into `T`; nil for 204/empty bodies and JSON `null`. Decoding failures are
    /// ``GarminError/decoding(_:)`` naming the type and the path.
    public func get<T: Decodable & Sendable>(_ path: String, query: [(String, String)] = [], as type: T.Type) async throws -> T? {
        let response = try await request("GET", path, query: query)
        if response.status == 204 || response.body.isEmpty || String(decoding: response.body, as: UTF8.self) == "null" {
            return nil
        }
        do { return try JSONDecoder().decode(T.self, from: response.body) } catch {
            throw GarminError.decoding("\(T.self) from \(path): \(String(describing: error).prefix(160))")
        }
    }

    /// The raw JSON of a typed endpoint (nil: no data).
    public func json(_ endpoint: GarminEndpoint) async throws -> JSONValue? {
        let v = try await connectAPI(endpoint.path, query: endpoint.queryItems)
        return v == .null ? nil : v
    }
}
