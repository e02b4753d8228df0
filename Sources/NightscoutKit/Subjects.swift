import Foundation
import LookoutWire

/// A subject of Nightscout's Admin Tools (`/api/v2/authorization/subjects`): a name with roles and
/// the access token the server derives for it. `description` never shows the token.
public struct AuthorizationSubject: Sendable, Equatable, Decodable, CustomStringConvertible {
    /// The subject's `_id` (24 hex).
    public var id: String
    /// Its name, e.g. `"lookout-reader"`.
    public var name: String
    /// Its roles, e.g. `["readable"]`.
    public var roles: [String]
    /// The access token (`<name abbreviation>-<16 hex>`); a secret.
    public var accessToken: String?

    enum CodingKeys: String, CodingKey { case id = "_id", name, roles, accessToken }

    /// Creates a subject value.
    public init(id: String, name: String, roles: [String], accessToken: String? = nil) {
        self.id = id
        self.name = name
        self.roles = roles
        self.accessToken = accessToken
    }

    /// Decodes a subject; `roles` may be missing.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
        roles = try c.decodeIfPresent([String].self, forKey: .roles) ?? []
        accessToken = try c.decodeIfPresent(String.self, forKey: .accessToken)
    }

    /// Name, roles and id; the token is shown only by its name part.
    public var description: String {
        let token = accessToken.map { " token \(AuthorizationSubject.masked($0))" } ?? ""
        return "AuthorizationSubject(\(name), roles: \(roles.joined(separator: ",")), id: \(id)\(token))"
    }

    /// An access token with its secret part hidden: `reader-…`.
    public static func masked(_ token: String) -> String {
        guard let dash = token.lastIndex(of: "-") else { return "…" }
        return String(token[...dash]) + "…"
    }
}

extension NightscoutClient {
    /// A request for `path` under `/api/v2/authorization` with the v1 headers.
    func authorizationRequest(_ method: String, _ path: String, body: Data? = nil) -> NightscoutRequest {
        let url = configuration.url(path: "/api/v2/authorization" + path)
        var headers = V1Query.headers(configuration)
        if body != nil { headers.append(.init(name: "Content-Type", value: "application/json")) }
        return NightscoutRequest(method: method, url: url, headers: headers, body: body)
    }

    /// `GET /api/v2/authorization/subjects`: every subject with its access token. Needs an admin
    /// (the API secret, or a token with `admin:api:subjects:read`).
    public func subjects() async throws -> [AuthorizationSubject] {
        let response = try await sendV1(authorizationRequest("GET", "/subjects"))
        return try NightscoutResponse.decodeV1([AuthorizationSubject].self, from: response)
    }

    /// Creates a subject (`POST /api/v2/authorization/subjects`) and returns it with the access
    /// token the server derived for it (the POST answer has none: it is read back with
    /// ``subjects()``). Needs an admin. Roles are Nightscout's (`readable`, `careportal`,
    /// `devicestatus-upload`, `admin`, …) or the site's own.
    public func createSubject(name: String, roles: [String], notes: String? = nil) async throws -> AuthorizationSubject {
        var body: [String: JSONValue] = ["name": .string(name), "roles": .array(roles.map(JSONValue.string))]
        if let notes { body["notes"] = .string(notes) }
        let response = try await sendV1(authorizationRequest("POST", "/subjects", body: JSONValue.object(body).jsonData))
        let created = try NightscoutResponse.decodeV1(AuthorizationSubject.self, from: response)
        guard let listed = try await subjects().first(where: { $0.id == created.id }) else {
            throw NightscoutError.decoding("the new subject \(created.id) is not in the subject list")
        }
        return listed
    }

    /// Deletes a subject by `_id` (`DELETE /api/v2/authorization/subjects/{id}`); its token stops
    /// working. Needs an admin.
    public func deleteSubject(id: String) async throws {
        _ = try await sendV1(authorizationRequest("DELETE", "/subjects/" + NightscoutRequest.percentEncode(id)))
    }
}
