import Foundation
import LookoutConfig
import LookoutStore
import NightscoutKit
import NorthlightKit
import LookoutWire

/// Sends feedback and bug reports; when the network fails or the server answers 429 or 5xx the
/// submission goes to the durable outbox (`lookout outbox` lists it) and is sent later, by this
/// process's background drainer or by the next run that opens the profile.
public enum NorthlightSubmissions {
    /// What became of a submission.
    public enum Outcome: Sendable {
        /// The server has it, under this id.
        case sent(id: String)
        /// Stored in the outbox for a later attempt; `reason` is why it could not go now.
        case queued(item: OutboxItem, reason: NorthlightError)
    }

    /// Sends `submission` now; queues it when the failure may pass. Final failures (invalid input,
    /// a refused key, the free tier's limit) are thrown and nothing is queued.
    public static func submit(_ submission: NorthlightSubmission, connection: NorthlightConnection, client: NorthlightClient,
                              store: any StateBackend, policy: RetryPolicy = RetryPolicy(), source: String?,
                              quota: OutboxQuota? = nil) async throws -> Outcome {
        let reason: NorthlightError
        do {
            return .sent(id: try await client.send(submission))
        } catch {
            reason = error
        }
        guard reason.isRetryable else { throw reason }
        // Stored already carrying the first attempt (the one above) and its wait, so a drain
        // running meanwhile (opening an outbox starts one) does not send it again at once.
        let failure = NorthlightOutboxSender.outboxError(reason)
        let wait = policy.delay(afterAttempts: 1, retryAfter: failure.retryAfter, random: Double.random(in: 0..<1))
        var item = OutboxItem(identifier: UUID().uuidString.lowercased(), site: connection.queue,
                              collectionName: NorthlightOutboxSender.collectionName(submission.kind), body: submission.body,
                              source: source, created: Date())
        item.attempts = 1
        item.nextAttempt = item.created.addingTimeInterval(wait)
        if let quota {
            try store.requireRoom()
            item = try await store.insert(item, quota: quota)
        } else {
            item = try await store.insert(item)
        }
        item.lastError = failure.message
        item.lastStatus = failure.status
        try await store.update(item)
        Self.outbox(queue: connection.queue, client: client, store: store, policy: policy).1.kick()
        return .queued(item: item, reason: reason)
    }

    /// The process's outbox of a Northlight queue (opened once; its drainer sends what is due).
    public static func outbox(queue: String, client: NorthlightClient, store: any StateBackend, policy: RetryPolicy) -> (Outbox, OutboxDrainer) {
        NightscoutOutboxes.outbox(queue: queue, store: store) {
            Outbox(sender: NorthlightOutboxSender(client: client), site: queue, store: store, policy: policy)
        }
    }

    /// Sends every pending item of `connection`'s queue now (the CLI, before it exits); with
    /// `ignoringBackoff`, also those whose next try is not due yet (a new run of a script).
    public static func flush(connection: NorthlightConnection, store: any StateBackend,
                             ignoringBackoff: Bool = false) async throws -> Outbox.DrainReport {
        let client = try await connection.client()
        let (queue, _) = Self.outbox(queue: connection.queue, client: client, store: store, policy: RetryPolicy())
        return await queue.drain(ignoringBackoff: ignoringBackoff)
    }

    /// An outbox able to send `queue`'s items, from the profile in `config` (for
    /// `lookout outbox retry`), when the queue is a Northlight one and the profile still matches.
    public static func outbox(forQueue queue: String, config: HostConfig, store: any StateBackend,
                       environment: [String: String]) async -> Outbox? {
        guard queue.hasPrefix("northlight:"), let profile = OutboxService.profileName(ofQueue: queue),
              let connection = try? NorthlightConnection.profile(profile, config: config, appVersion: "unknown", environment: environment),
              connection.queue == queue, let client = try? await connection.client() else { return nil }
        return Outbox(sender: NorthlightOutboxSender(client: client), site: queue, store: store)
    }
}
