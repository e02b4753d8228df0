import AsyncHTTPClient
import Foundation
import NIOCore

/// One HTTP exchange as NorthlightKit sees it.
public struct NorthlightHTTPRequest: Sendable {
    /// `GET` or `POST`.
    public var method: String
    /// The full URL.
    public var url: URL
    /// Headers, including `X-API-Key` (a transport must never log them).
    public var headers: [(name: String, value: String)]
    /// The JSON body, for POST.
    public var body: Data?
}

/// An answer: status, headers (first value per lower-cased name) and body.
public struct NorthlightHTTPResponse: Sendable {
    /// HTTP status.
    public var status: Int
    /// Headers by lower-cased name.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// An answer (tests build their own).
    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status; self.headers = headers; self.body = body
    }
}

/// Sends requests. The default uses AsyncHTTPClient; tests may inject a function.
public struct NorthlightTransport: Sendable {
    /// Performs one request with a timeout in seconds; failures to complete throw
    /// `NorthlightError.networkError`.
    public typealias Send = @Sendable (_ request: NorthlightHTTPRequest, _ timeout: TimeInterval) async throws(NorthlightError)
        -> NorthlightHTTPResponse

    /// The send function.
    public let send: Send

    /// Wraps a send function.
    public init(send: @escaping Send) { self.send = send }

    /// The process's client for Northlight: no redirects (a redirect would carry `X-API-Key` to
    /// another address; a 3xx is reported as a server error instead), and a refused connection
    /// fails at once rather than being retried until the request's deadline (failed submissions
    /// are retried by the caller's outbox). Never shut down: it lives as long as the process.
    public static let sharedClient: HTTPClient = {
        var pool = HTTPClient.Configuration.ConnectionPool()
        pool.retryConnectionEstablishment = false
        let configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10)),
                                                     connectionPool: pool)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// A transport over AsyncHTTPClient (`sharedClient` by default) reading at most
    /// `maximumBodyBytes` of a response. Error texts name the method, path and failure kind only.
    public static func asyncHTTPClient(_ client: HTTPClient = sharedClient, maximumBodyBytes: Int = 1024 * 1024) -> NorthlightTransport {
        NorthlightTransport { (request, timeout) throws(NorthlightError) in
            var req = HTTPClientRequest(url: request.url.absoluteString)
            req.method = .init(rawValue: request.method)
            for h in request.headers { req.headers.add(name: h.name, value: h.value) }
            if let body = request.body { req.body = .bytes(ByteBuffer(bytes: body)) }
            let what = "\(request.method) \(request.url.path)"
            do {
                let response = try await client.execute(req, timeout: .milliseconds(Int64((timeout * 1000).rounded())))
                let buffer: ByteBuffer
                do {
                    buffer = try await response.body.collect(upTo: maximumBodyBytes)
                } catch is NIOTooManyBytesError {
                    throw NorthlightError.networkError("\(what): response body exceeds \(maximumBodyBytes) bytes")
                }
                var headers: [String: String] = [:]
                for h in response.headers where headers[h.name.lowercased()] == nil { headers[h.name.lowercased()] = h.value }
                return NorthlightHTTPResponse(status: Int(response.status.code), headers: headers, body: Data(buffer.readableBytesView))
            } catch let error as NorthlightError {
                throw error
            } catch {
                throw NorthlightError.networkError("\(what): \(describe(error))")
            }
        }
    }

    /// A short, header-free name for a transport failure.
    static func describe(_ error: any Error) -> String {
        if let e = error as? HTTPClientError {
            if e == .deadlineExceeded || e == .readTimeout || e == .connectTimeout { return "timed out" }
            if e == .remoteConnectionClosed { return "connection closed by server" }
            return "HTTP client error (\(String(describing: e).prefix(120)))"
        }
        let text = String(describing: error)
        if text.contains("connectionRefused") || text.contains("Connection refused") { return "connection refused" }
        return String(describing: type(of: error)) + " (" + String(text.prefix(120)) + ")"
    }
}
