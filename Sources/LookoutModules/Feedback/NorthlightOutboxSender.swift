import Foundation
import LookoutStore
import NightscoutKit
import NorthlightKit

/// Sends queued Northlight submissions (`northlight.feedback`, `northlight.bug` outbox items)
/// with the project's client; Northlight errors become `OutboxSendError`s for the retry rules.
struct NorthlightOutboxSender: OutboxSender {
    /// The outbox collection name of a submission kind.
    static func collectionName(_ kind: NorthlightSubmission.Kind) -> String { "northlight." + kind.rawValue }

    /// The Northlight client the submissions are sent with.
    public let client: NorthlightClient

    func send(_ item: OutboxItem) async throws -> Bool {
        guard item.collectionName.hasPrefix("northlight."),
              let kind = NorthlightSubmission.Kind(rawValue: String(item.collectionName.dropFirst("northlight.".count))) else {
            throw OutboxSendError(message: "outbox item \(item.identifier) is a \(item.collectionName), not a Northlight submission",
                                  retryable: false)
        }
        do {
            _ = try await client.send(NorthlightSubmission(kind: kind, body: item.body))
            return false
        } catch {
            throw Self.outboxError(error)
        }
    }

    /// A Northlight error classified for the outbox.
    static func outboxError(_ error: NorthlightError) -> OutboxSendError {
        OutboxSendError(message: error.description, status: error.status, retryable: error.isRetryable, retryAfter: error.retryAfter)
    }
}
