import Foundation
import NightscoutKit

/// Sends one outbox item. The outbox is not tied to Nightscout: another service queues items
/// with its own `collectionName` and sender.
public protocol OutboxSender: Sendable {
    /// Sends `item`; returns whether the server matched an existing document (deduplicated).
    /// Throw `NightscoutError` or `OutboxSendError` so the retry rules can tell a passing failure
    /// from a final one (other errors count as passing).
    func send(_ item: OutboxItem) async throws -> Bool
}

/// A failure of a non-Nightscout sender, classified for the retry rules.
public struct OutboxSendError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What happened, as the user should read it (never a credential).
    public var message: String
    /// The HTTP status, when the server answered.
    public var status: Int?
    /// Whether sending again later may succeed.
    public var retryable: Bool
    /// The server's requested wait in seconds, if any.
    public var retryAfter: TimeInterval?

    /// A classified failure.
    public init(message: String, status: Int? = nil, retryable: Bool, retryAfter: TimeInterval? = nil) {
        self.message = message; self.status = status; self.retryable = retryable; self.retryAfter = retryAfter
    }

    public var description: String { message }
}

/// Sends Nightscout uploads with the API in use (v3 create, or a v1 POST of a one-document array).
struct NightscoutOutboxSender: OutboxSender {
    /// The Nightscout site the uploads go to.
    public let client: NightscoutClient

    func send(_ item: OutboxItem) async throws -> Bool {
        guard let collection = item.collection else {
            throw NightscoutError.invalidRequest("outbox item \(item.identifier) is a \(item.collectionName), not a Nightscout upload")
        }
        switch try await client.resolvedAPI() {
        case .v3:
            return try await client.create(collection, json: item.body, identifier: item.identifier).isDeduplicated
        case .v1:
            guard collection != .settings else {
                throw NightscoutError.unsupportedCredentials("settings need API v3: configure an access token")
            }
            var array = Data("[".utf8)
            array.append(item.body)
            array.append(Data("]".utf8))
            _ = try await client.v1JSON("POST", "/" + collection.rawValue, body: array)
            return false
        }
    }
}
