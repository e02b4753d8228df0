import Foundation
import Hummingbird
import LookoutWire

/// A request as the route handlers see it.
struct SimRequest: Sendable {
    var method: String
    var path: String
    /// Path split on `/`, percent-decoded, empty segments removed.
    var segments: [String]
    /// Query items in order (keys and values percent-decoded, `+` → space).
    var query: [(String, String)]
    var headers: [String: String]  // lowercased names
    var body: Data
    var client: String

    func header(_ name: String) -> String? { headers[name.lowercased()] }
    func queryValue(_ name: String) -> String? { query.first { $0.0 == name }?.1 }

    /// Parsed JSON body (nil when empty or malformed).
    var json: JSONValue? { body.isEmpty ? nil : try? JSONValue.parse(body) }

    static func parseQuery(_ q: String?) -> [(String, String)] {
        guard let q, !q.isEmpty else { return [] }
        return q.split(separator: "&").map { item in
            let kv = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func dec(_ s: Substring) -> String {
                String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s)
            }
            return (dec(kv[0]), kv.count > 1 ? dec(kv[1]) : "")
        }
    }
}

/// A response before it becomes a Hummingbird `Response`.
struct SimResponse: Sendable, Error {
    var status: Int
    var headers: [(String, String)] = []
    var body: Data = Data()
    var contentType: String? = "application/json; charset=utf-8"

    static func json(_ status: Int, _ v: JSONValue, headers: [(String, String)] = []) -> SimResponse {
        SimResponse(status: status, headers: headers, body: v.jsonData)
    }
    static func text(_ status: Int, _ s: String, contentType: String = "text/plain; charset=utf-8") -> SimResponse {
        SimResponse(status: status, body: Data(s.utf8), contentType: contentType)
    }
    static func empty(_ status: Int, headers: [(String, String)] = []) -> SimResponse {
        SimResponse(status: status, headers: headers, body: Data(), contentType: nil)
    }
}

/// Request context carrying the client address.
struct SimRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    var client: String
    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        client = source.channel.remoteAddress?.ipAddress ?? "127.0.0.1"
    }
}

/// The single responder: faults first, then the API routers.
struct NightscoutResponder: HTTPResponder {
    typealias Context = SimRequestContext
    let sim: NightscoutSimulator

    func respond(to request: Request, context: SimRequestContext) async throws -> Response {
        let req = try await SimRequest.collect(request, context: context, limit: 60 * 1024 * 1024)
        let path = req.path
        let headers = req.headers

        let fault = await sim.faults.next(path: path)
        if let ms = fault.latencyMs, ms > 0 { try? await Task.sleep(for: .milliseconds(ms)) }
        let resp: SimResponse
        if let forced = fault.response { resp = forced } else { resp = await NightscoutRouter.route(req, sim: sim) }
        await sim.requests.add(
            NightscoutRequestRecord(
                method: req.method, path: path, query: request.uri.query, headers: headers, status: resp.status,
                identifier: Self.documentIdentifier(req)))
        return Self.convert(resp, mode: fault.response == nil ? fault.bodyMode : .normal)
    }

    /// The `identifier` of a single small JSON document sent by `POST` or `PUT`.
    static func documentIdentifier(_ req: SimRequest) -> String? {
        guard req.method == "POST" || req.method == "PUT", !req.body.isEmpty, req.body.count <= 16 * 1024,
              req.body.first == UInt8(ascii: "{") else { return nil }
        return req.json?["identifier"]?.stringValue
    }

    static func convert(_ r: SimResponse, mode: NightscoutFaults.BodyMode) -> Response {
        var fields = HTTPFields()
        if let ct = r.contentType { fields[.contentType] = ct }
        for (k, v) in r.headers { if let n = HTTPFields.Key(k) { fields[n] = v } }
        let status = HTTPResponse.Status(code: r.status)
        let bytes = r.body
        switch mode {
        case .normal:
            return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        case .truncated:
            // Announce the full length, send half, then drop the connection.
            let half = bytes.prefix(bytes.count / 2)
            return Response(
                status: status, headers: fields,
                body: .init(contentLength: max(bytes.count, 2)) { writer in
                    try await writer.write(ByteBuffer(bytes: half))
                    throw CancellationError()
                })
        case .slow(let chunk, let delayMs):
            return Response(
                status: status, headers: fields,
                body: .init(contentLength: bytes.count) { writer in
                    var offset = 0
                    while offset < bytes.count {
                        let end = min(bytes.count, offset + max(chunk, 1))
                        try await writer.write(ByteBuffer(bytes: bytes[offset..<end]))
                        offset = end
                        if offset < bytes.count { try await Task.sleep(for: .milliseconds(delayMs)) }
                    }
                    try await writer.finish(nil)
                })
        }
    }
}

/// Top-level path dispatch.
enum NightscoutRouter {
    static func route(_ req: SimRequest, sim: NightscoutSimulator) async -> SimResponse {
        let s = req.segments
        guard s.first == "api" else { return .json(404, ["status": 404, "message": "Not Found"]) }
        if s.count == 2, s[1] == "versions", req.method == "GET" {
            return .json(
                200,
                [
                    ["version": "1.0.0", "url": "/api/v1"], ["version": "2.0.0", "url": "/api/v2"],
                    ["version": "3.0.3-alpha", "url": "/api/v3"],
                ])
        }
        guard s.count >= 2 else { return .json(404, ["status": 404, "message": "Not Found"]) }
        switch s[1] {
        case "v3": return await NightscoutV3.handle(req, rest: Array(s.dropFirst(2)), sim: sim)
        case "v1": return await NightscoutV1.handle(req, rest: Array(s.dropFirst(2)), sim: sim, v2: false)
        case "v2": return await NightscoutV1.handle(req, rest: Array(s.dropFirst(2)), sim: sim, v2: true)
        default: return .json(404, ["status": 404, "message": "Not Found"])
        }
    }
}
