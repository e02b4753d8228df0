import Foundation
import LookoutWire

/// `GET /api/v1/status.json` (spec §2.6), the fields clients use; everything else is in `raw`.
public struct V1ServerStatus: Sendable, Equatable, Decodable {
    /// `"ok"` when the server is up.
    public var status: String?
    /// Site name.
    public var name: String?
    /// Server version (e.g. `15.0.7`).
    public var version: String?
    /// Server time, epoch ms.
    public var serverTimeEpoch: Int64?
    /// Whether the v1 API (writes) is enabled.
    public var apiEnabled: Bool?
    /// The whole object.
    public var raw: JSONValue

    /// Decodes the status object.
    public init(from decoder: any Decoder) throws {
        raw = try JSONValue(from: decoder)
        status = raw["status"]?.stringValue
        name = raw["name"]?.stringValue
        version = raw["version"]?.stringValue
        serverTimeEpoch = raw["serverTimeEpoch"]?.lenientDoubleValue.flatMap(NightscoutDate.milliseconds)
        if case .bool(let enabled)? = raw["apiEnabled"] { apiEnabled = enabled } else { apiEnabled = nil }
    }
}

/// `GET /api/v1/verifyauth` (spec §1.6): what the sent credentials allow.
public struct V1AuthVerification: Sendable, Equatable, Decodable {
    /// Can read `*:*:read`.
    public var canRead: Bool
    /// Can write.
    public var canWrite: Bool
    /// Is admin.
    public var isAdmin: Bool
    /// `"OK"` when the credentials resolved and allow reading; otherwise `"UNAUTHORIZED"`.
    public var message: String
    /// `FOUND` when a subject resolved.
    public var rolefound: String?
    /// `DEFAULT` when no credentials were sent, else `ROLE`.
    public var permissions: String?

    /// Whether the credentials were accepted (`message == "OK"`).
    public var isAuthenticated: Bool { message == "OK" }

    private enum Keys: String, CodingKey { case canRead, canWrite, isAdmin, message, rolefound, permissions }

    /// Decodes either the envelope `{"status":200,"message":{…}}` or the inner object.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        if let inner = try? c.decode(V1AuthVerification.Inner.self, forKey: .message) {
            self = inner.value
            return
        }
        canRead = try c.decodeIfPresent(Bool.self, forKey: .canRead) ?? false
        canWrite = try c.decodeIfPresent(Bool.self, forKey: .canWrite) ?? false
        isAdmin = try c.decodeIfPresent(Bool.self, forKey: .isAdmin) ?? false
        message = try c.decodeIfPresent(String.self, forKey: .message) ?? ""
        rolefound = try c.decodeIfPresent(String.self, forKey: .rolefound)
        permissions = try c.decodeIfPresent(String.self, forKey: .permissions)
    }

    private struct Inner: Decodable {
        var value: V1AuthVerification
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            guard let message = try c.decodeIfPresent(String.self, forKey: .message) else {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath, debugDescription: "not the inner object"))
            }
            value = V1AuthVerification(
                canRead: try c.decodeIfPresent(Bool.self, forKey: .canRead) ?? false,
                canWrite: try c.decodeIfPresent(Bool.self, forKey: .canWrite) ?? false,
                isAdmin: try c.decodeIfPresent(Bool.self, forKey: .isAdmin) ?? false,
                message: message,
                rolefound: try c.decodeIfPresent(String.self, forKey: .rolefound),
                permissions: try c.decodeIfPresent(String.self, forKey: .permissions))
        }
    }

    /// Creates a verification result.
    public init(canRead: Bool, canWrite: Bool, isAdmin: Bool, message: String, rolefound: String? = nil, permissions: String? = nil) {
        self.canRead = canRead; self.canWrite = canWrite; self.isAdmin = isAdmin; self.message = message
        self.rolefound = rolefound; self.permissions = permissions
    }
}
