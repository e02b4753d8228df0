import Foundation
import NightscoutKit

/// One upload waiting in (or done with) the outbox.
///
/// The `identifier` is made by the client before the first attempt and never changes, so a
/// re-send after a crash or a lost answer is recognised by the server (v3 deduplicates on it;
/// v1 treatments upsert on it; v1 entries upsert on `sysTime` + `type`).
public struct OutboxItem: Sendable, Equatable {
    /// Where an item is.
    public enum State: String, Sendable, CaseIterable {
        /// Waiting for its first or next attempt (`nextAttempt`).
        case pending
        /// Stored by the server.
        case sent
        /// Stopped: the server refused it in a way retrying cannot fix (400, 401, 403, 422…).
        /// Kept until the user retries or drops it.
        case failed
    }

    /// The outbox id (also the document's identifier).
    public var identifier: String
    /// The site (`OutboxItem.siteKey(for:)`).
    public var site: String
    /// What the item is, as stored and shown: a Nightscout collection (`treatments`) or another
    /// service's kind (`northlight.feedback`).
    public var collectionName: String
    /// The Nightscout collection, when the item is a Nightscout upload.
    public var collection: V3Collection? { V3Collection(rawValue: collectionName) }
    /// The document as JSON.
    public var body: Data
    /// Who queued it (a script name), for the user.
    public var source: String?
    /// When it was queued.
    public var created: Date
    /// Where it is.
    public var state: State
    /// Attempts made so far.
    public var attempts: Int
    /// When the next attempt is due (pending items).
    public var nextAttempt: Date
    /// The last failure, as the user should read it (never a credential).
    public var lastError: String?
    /// The HTTP status of the last failure, if the server answered.
    public var lastStatus: Int?
    /// When it was sent, and whether the server matched an existing document.
    public var sentAt: Date?
    /// `true` when the server deduplicated the send onto a stored document.
    public var deduplicated: Bool?

    /// A new pending Nightscout upload, due now.
    public init(identifier: String, site: String, collection: V3Collection, body: Data, source: String?, created: Date) {
        self.init(identifier: identifier, site: site, collectionName: collection.rawValue, body: body, source: source, created: created)
    }

    /// A new pending item of any kind, due now (an `OutboxSender` knows how to send it).
    public init(identifier: String, site: String, collectionName: String, body: Data, source: String?, created: Date) {
        self.identifier = identifier; self.site = site; self.collectionName = collectionName; self.body = body
        self.source = source; self.created = created; self.state = .pending; self.attempts = 0
        self.nextAttempt = created
    }

    /// The key of a site in the outbox: its URL without credentials.
    public static func siteKey(for configuration: NightscoutConfiguration) -> String {
        configuration.siteURL.absoluteString
    }
}
