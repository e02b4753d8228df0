import Foundation
import LookoutWire
import Hummingbird

/// One request a simulator answered, for assertions (retries, headers sent, paths used).
public struct SimRequestRecord: Sendable {
    /// HTTP method, e.g. `GET`.
    public var method: String
    /// Path without the query, e.g. `/api/v3/entries`.
    public var path: String
    /// The raw query string (percent-encoded), or nil.
    public var query: String?
    /// Request headers, names lowercased.
    public var headers: [String: String]
    /// Status code sent (including injected faults).
    public var status: Int
    /// The `identifier` of a `POST` or `PUT` whose body is one JSON document (up to 16 KB) that
    /// has one; nil otherwise. Counts re-sends of the same document, whatever the answer was.
    public var identifier: String? = nil
}

/// The Nightscout simulator's name for a `SimRequestRecord`.
public typealias NightscoutRequestRecord = SimRequestRecord

/// Keeps every answered request in order.
actor RequestLog {
    var records: [SimRequestRecord] = []
    func add(_ r: SimRequestRecord) { records.append(r) }
    func clear() { records.removeAll() }
}

/// A request as `RequestLogMiddleware` saw it, with the status it was answered with.
struct LoggedRequest: Sendable {
    var method: String
    var path: String
    /// The raw query string, or nil.
    var query: String?
    /// Header fields, names lowercased.
    var headers: [String: String]
    var body: Data
    var status: Int
}

/// Records every request of a router (matched or not) with the status it was answered with.
/// Add it before the other middleware, so that it sees their answers too.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = SimRequestContext
    /// The most body it reads (the routes read the same bytes again).
    let bodyLimit: Int
    /// Keeps one request.
    let record: @Sendable (LoggedRequest) async -> Void

    /// Records into any store.
    init(bodyLimit: Int, record: @escaping @Sendable (LoggedRequest) async -> Void) {
        self.bodyLimit = bodyLimit
        self.record = record
    }

    /// Records `SimRequestRecord`s into `log`.
    init(log: RequestLog, bodyLimit: Int) {
        self.init(bodyLimit: bodyLimit) { logged in
            await log.add(
                SimRequestRecord(
                    method: logged.method, path: logged.path, query: logged.query, headers: logged.headers,
                    status: logged.status, identifier: Self.documentIdentifier(method: logged.method, body: logged.body)))
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var request = request
        let body = Data(buffer: try await request.collectBody(upTo: bodyLimit))
        var headers: [String: String] = [:]
        for f in request.headers { headers[f.name.canonicalName.lowercased()] = f.value }
        let response = try await next(request, context)
        await record(
            LoggedRequest(
                method: request.method.rawValue, path: request.uri.path, query: request.uri.query, headers: headers,
                body: body, status: response.status.code))
        return response
    }

    /// The `identifier` of a single small JSON document sent by `POST` or `PUT`.
    static func documentIdentifier(method: String, body: Data) -> String? {
        guard method == "POST" || method == "PUT", !body.isEmpty, body.count <= 16 * 1024,
              body.first == UInt8(ascii: "{") else { return nil }
        return (try? JSONValue.parse(body))?["identifier"]?.stringValue
    }
}

/// Reads the request body up to `limit` bytes before anything else; a larger body gets
/// `tooLarge` (and reaches no other middleware or route).
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = SimRequestContext
    let limit: Int
    let tooLarge: SimResponse

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var request = request
        do {
            _ = try await request.collectBody(upTo: limit)
        } catch {
            return tooLarge.httpResponse
        }
        return try await next(request, context)
    }
}
