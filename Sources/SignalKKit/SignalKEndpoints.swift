import Foundation
import LookoutWire

/// The `GET /signalk` discovery document, reduced to what a client needs (contract §1.2):
/// the `endpoints.v1` URLs, resolved against the URL the document was fetched from (servers may send
/// relative URLs), plus the server's id and version for diagnostics.
public struct SignalKEndpoints: Sendable, Hashable {
    /// The v1 version string (signalk-server: its package version).
    public var version: String?
    /// The REST base (`…/signalk/v1/api/`, note the trailing slash), if offered.
    public var http: URL?
    /// The WebSocket stream URL (`ws[s]://…/signalk/v1/stream`), if offered.
    public var ws: URL?
    /// The TCP stream URL, present only when that interface runs.
    public var tcp: URL?
    /// `server.id` (`signalk-server-node` for signalk-server).
    public var serverId: String?
    /// `server.version`.
    public var serverVersion: String?

    /// Decodes the document. `baseURL` is the URL it was fetched from (`http://host:3000/signalk`).
    /// Throws ``SignalKDecodingError/missingField(field:)`` for `endpoints.v1` when there is no v1 group.
    public init(json: JSONValue, baseURL: URL) throws {
        guard case .object = json else {
            throw SignalKDecodingError.wrongType(field: "discovery document", expected: "object", found: json.typeName)
        }
        guard case .object(let v1)? = json["endpoints"]?["v1"] else {
            throw SignalKDecodingError.missingField(field: "endpoints.v1")
        }
        func url(_ key: String) throws -> URL? {
            guard let s = try Fields.optString(v1, key, at: "endpoints.v1." + key) else { return nil }
            return URL(string: s, relativeTo: baseURL)?.absoluteURL
        }
        version = try Fields.optString(v1, "version", at: "endpoints.v1.version")
        http = try url("signalk-http")
        ws = try url("signalk-ws")
        tcp = try url("signalk-tcp")
        serverId = json["server"]?["id"]?.stringValue
        serverVersion = json["server"]?["version"]?.stringValue
    }
}
