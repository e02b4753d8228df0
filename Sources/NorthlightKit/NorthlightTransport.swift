import Foundation
import LookoutWire

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

    /// A transport over LookoutWire's ``WireHTTPClient`` (`client`, the process's by default)
    /// reading at most `maximumBodyBytes` of a response. No redirect is followed (it would carry
    /// `X-API-Key` to another address; a 3xx is reported as a server error instead), and a refused
    /// connection fails at once (failed submissions are retried by the caller's outbox). Error
    /// texts name the method, path and failure kind only.
    public static func asyncHTTPClient(_ client: WireHTTPClient = .shared, maximumBodyBytes: Int = 1024 * 1024) -> NorthlightTransport {
        NorthlightTransport { (request, timeout) throws(NorthlightError) in
            let wire = WireHTTPRequest(method: request.method, url: request.url, headers: request.headers, body: request.body)
            do {
                let response = try await client.send(wire, timeout: .milliseconds(Int64((timeout * 1000).rounded())),
                                                     maximumBodyBytes: maximumBodyBytes, redirects: .none)
                var headers: [String: String] = [:]
                for h in response.headers where headers[h.name.lowercased()] == nil { headers[h.name.lowercased()] = h.value }
                return NorthlightHTTPResponse(status: response.status, headers: headers, body: response.body)
            } catch let error as WireHTTPError {
                throw NorthlightError.networkError(error.description)
            } catch {
                throw NorthlightError.networkError("\(request.method) \(request.url.path): cancelled")
            }
        }
    }
}
