import Foundation
import Lua

/// One HTTP exchange as a script asked for it (`http.request{…}`), with its arguments checked.
///
/// `prepared()` turns it into what the transport sends, or into an `invalid_url` failure.
public struct HTTPRequestSpec: Sendable {
    /// Seconds a whole exchange (connect, send, response head and body) may take by default.
    static let defaultTimeout: Double = 30
    /// The largest response body read by default: 10 MiB.
    static let defaultMaxSize = 10 << 20
    /// Most redirects followed for one request.
    static let maxRedirects = 5

    /// The method, upper case (`GET`, `POST`, …).
    public var method = "GET"
    /// The URL as the script gave it.
    public var url = ""
    /// Query parameters to append, in order.
    public var query: [(name: String, value: String)] = []
    /// Header lines, in order; a name may repeat.
    public var headers: [(name: String, value: String)] = []
    /// The request body, if any.
    public var body: [UInt8]?
    /// The `content-type` the body implies (JSON or form), used unless a header sets one.
    public var impliedContentType: String?
    /// Seconds the whole exchange may take.
    public var timeout = defaultTimeout
    /// The largest response body accepted, in bytes.
    public var maxSize = defaultMaxSize
    /// Whether 3xx answers with a `location` are followed (at most `maxRedirects`).
    public var followRedirects = true

    /// The request ready to send: the query appended, default headers added, the URL checked.
    /// - Throws: an `invalid_url` failure for malformed URLs and schemes other than http/https, and
    ///   `refused` for a Loop remote-command endpoint (``RemoteCommandEndpoints``).
    public func prepared() throws(HTTPFailure) -> HTTPPreparedRequest {
        let full = HTTPRequestSpec.appending(query: query, to: url)
        // First, so that no spelling Foundation cannot parse gets a different answer.
        guard !RemoteCommandEndpoints.matches(url: full) else { throw HTTPFailure.remoteCommand(method, full) }
        guard let components = URLComponents(string: full), let scheme = components.scheme?.lowercased() else {
            throw HTTPFailure.invalidURL(url, "not a valid absolute URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw HTTPFailure.invalidURL(url, "only http and https URLs are supported, not \(scheme)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw HTTPFailure.invalidURL(url, "the URL has no host")
        }
        var lines = headers
        let has = { (name: String) in lines.contains { $0.name.lowercased() == name } }
        if let impliedContentType, !has("content-type") { lines.append((name: "content-type", value: impliedContentType)) }
        if !has("user-agent") { lines.append((name: "user-agent", value: "lookout")) }
        return HTTPPreparedRequest(
            method: method, url: full, displayURL: HTTPFailure.display(url: full), headers: lines, body: body,
            timeout: timeout, maxSize: maxSize, followRedirects: followRedirects)
    }

    /// `url` without its fragment, with `query` appended (`?` or `&`), each part percent-encoded.
    static func appending(query: [(name: String, value: String)], to url: String) -> String {
        var base = url
        if let hash = base.firstIndex(of: "#") { base = String(base[..<hash]) }
        guard !query.isEmpty else { return base }
        let separator = !base.contains("?") ? "?" : (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&")
        return base + separator + formEncoded(query)
    }

    /// `a=1&b=x%20y`: names and values percent-encoded (everything but RFC 3986 unreserved
    /// characters), for query strings and `application/x-www-form-urlencoded` bodies.
    public static func formEncoded(_ pairs: [(name: String, value: String)]) -> String {
        pairs.map { percentEncoded($0.name) + "=" + percentEncoded($0.value) }.joined(separator: "&")
    }

    /// Percent-encodes every byte except `A-Z a-z 0-9 - . _ ~`.
    public static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// An empty GET request (fill in the fields).
    public init() {}
}

/// A request the transport can send as it is.
public struct HTTPPreparedRequest: Sendable {
    /// The method, upper case.
    public var method: String
    /// The full URL (query included).
    public var url: String
    /// The URL for messages: no credentials, no query, no fragment.
    var displayURL: String
    /// Header lines, in order.
    var headers: [(name: String, value: String)]
    /// The body, if any.
    public var body: [UInt8]?
    /// Seconds the whole exchange may take.
    public var timeout: Double
    /// The largest response body accepted, in bytes.
    public var maxSize: Int
    /// Whether redirects are followed.
    public var followRedirects: Bool

    /// `GET http://host/path`, for messages.
    public var summary: String { "\(method) \(displayURL)" }
}

/// A complete answer: status, header lines and the whole body.
public struct HTTPResult: Sendable {
    /// The status code (non-2xx included: they are answers, not failures).
    public var status: Int
    /// Header lines as received.
    var headers: [(name: String, value: String)]
    /// The body, at most the request's `maxSize` bytes.
    public var body: [UInt8]
    /// The body's bytes in the script's host memory budget (``LuaHostBytes``), given back when
    /// the result is freed (after the body was handed to the script).
    var hold: LuaHostBytes.Hold?

    /// Headers by lower-case name; repeated headers joined with `", "`.
    public var joinedHeaders: [String: String] {
        var joined: [String: String] = [:]
        for (name, value) in headers {
            let key = name.lowercased()
            if let earlier = joined[key] { joined[key] = earlier + ", " + value } else { joined[key] = value }
        }
        return joined
    }

    /// Whether the body is JSON by its `content-type` (`application/json`, `…+json`).
    var isJSON: Bool {
        guard let type = joinedHeaders["content-type"] else { return false }
        let media = type.split(separator: ";", maxSplits: 1).first.map(String.init) ?? type
        let trimmed = media.trimmingCharacters(in: .whitespaces).lowercased()
        return trimmed == "application/json" || trimmed.hasSuffix("+json")
    }
}
