import Foundation
import LookoutWire
import Hummingbird

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
    /// Route parameters (`{name}` in the route), percent-decoded.
    var parameters: [String: String] = [:]
    /// What a `**` route matched, split on `/`, percent-decoded, empty segments removed.
    var tail: [String] = []

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

    /// The Hummingbird response: the content type, then `headers` in order (a repeated name is
    /// sent repeatedly, as `Set-Cookie` needs).
    var httpResponse: Response {
        var fields = HTTPFields()
        if let contentType { fields[.contentType] = contentType }
        for (k, v) in headers { if let n = HTTPFields.Key(k) { fields.append(.init(name: n, value: v)) } }
        return Response(
            status: HTTPResponse.Status(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension SimResponse: ResponseGenerator {
    /// The Hummingbird response (so route closures may return a `SimResponse`).
    func response(from request: Request, context: some RequestContext) -> Response { httpResponse }
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
