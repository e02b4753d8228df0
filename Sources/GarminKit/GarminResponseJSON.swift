import Foundation
import LookoutWire

/// Connect API and SSO response bodies as JSON values.
enum GarminResponseJSON {
    /// Parses a response body; throws ``GarminError/decoding(_:)`` naming its size (never its
    /// content, which may hold tokens).
    static func parse(_ data: Data) throws -> JSONValue {
        do { return try JSONParser.parse(data) } catch {
            throw GarminError.decoding("malformed JSON (\(data.count) bytes)")
        }
    }
}
