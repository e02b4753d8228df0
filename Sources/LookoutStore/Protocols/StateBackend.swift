import Foundation
import LookoutConfig
import NightscoutKit

/// Everything Lookout keeps in its state database, as one set of protocols with two backends:
/// `StateStore` (the SQLite file, one machine, the default) and `PostgresStateStore` (a shared
/// PostgreSQL database, `[state] url`). The behaviour suite
/// (`Tests/LookoutStoreTests/StateBackendBehaviour.swift`) runs every requirement against both.
///
/// Errors are `StateStoreError` (scripts see `err.code == "store"`, or `quota`), naming the
/// database (a file, or a URL without its password).
public protocol StateBackend: ScriptValueStore, NotifyQueueStore, AlertStateStore, RemoteCommandAudit, OutboxStore,
    MirrorStore, ClusterLeaseStore, ProfileCatalogueStore {
    /// Names this database in process-wide registries (outboxes, guards, locks).
    var identity: String { get }
    /// Where it is, for messages: a file path or a URL without password.
    var location: String { get }
    /// The applied schema migrations, in order (names shared by both backends).
    func appliedMigrations() async throws(StateStoreError) -> [String]
    /// Throws (`err.code` `quota` or `disk_full`, retryable) when a script's write would eat
    /// into the room kept for the guard and the audit log (`[state] max_size`, `min_free`).
    func requireRoom() throws(StateStoreError)
    /// The database's clock, its audit protections and its clusters (`lookout doctor`).
    func health() async throws(StateStoreError) -> StateHealth
    /// The outbox items with `identifier`, on any site (`lookout outbox retry ID`).
    func outboxItems(identifier: String) async throws -> [OutboxItem]
}

/// The scripts' key/value store (`store` module; schedule bookkeeping under the reserved script
/// `(schedule)`). Values are JSON text exactly as `json.encode` wrote it, read back byte for byte.
public protocol ScriptValueStore: Sendable {
    /// The JSON text stored under `key` for `script`, or nil.
    func value(script: String, key: String) async throws(StateStoreError) -> [UInt8]?
    /// Stores JSON text under `key`; nil deletes it. With a `quota`, a write that takes the
    /// script over it and grows what it keeps throws code `quota` and stores nothing; two
    /// concurrent writers cannot both slip under it.
    func setValue(_ json: [UInt8]?, script: String, key: String, quota: StoreQuota?) async throws(StateStoreError)
    /// Compare-and-swap: replaces the value only if it is still `expected` (nil: absent).
    func replaceValue(script: String, key: String, expected: [UInt8]?, with json: [UInt8]?, quota: StoreQuota?)
        async throws(StateStoreError) -> Bool
    /// The keys of `script` starting with `prefix`, in byte order.
    func keys(script: String, prefix: String) async throws(StateStoreError) -> [String]
    /// Every key of `script` with its JSON text, in key order.
    func entries(script: String) async throws(StateStoreError) -> [(key: String, value: [UInt8])]
}

/// The durable notification queue (`notify` module, alerts). A claim makes one sender the
/// owner of an item until it finishes or the claim lease expires: two claimers never both get it.
public protocol NotifyQueueStore: Sendable {
    /// Stores a new item, or returns the stored one with the same id.
    func insertNotification(_ message: NotifyMessage, now: Date) async throws(StateStoreError) -> NotifyItem
    /// Claims one item for sending; nil when another sender has it, it is not due (unless
    /// `force`), or it is no longer pending.
    func claimNotification(id: String, now: Date, force: Bool) async throws(StateStoreError) -> NotifyItem?
    /// Claims up to `limit` due items at once, oldest first, skipping items another sender is
    /// claiming at this moment (PostgreSQL: `FOR UPDATE SKIP LOCKED`).
    func claimDueNotifications(now: Date, limit: Int) async throws(StateStoreError) -> [NotifyItem]
    /// Stores the outcome of an attempt (and ends the claim).
    func finishNotification(_ item: NotifyItem) async throws(StateStoreError)
    /// Ids of items due at `now`, oldest first.
    func dueNotifications(now: Date, limit: Int) async throws(StateStoreError) -> [String]
    /// The earliest time an unsent item may need an attempt.
    func nextNotificationDue() async throws(StateStoreError) -> Date?
    /// Items in the given states, oldest first.
    func notifications(states: Set<NotifyItem.State>, limit: Int) async throws(StateStoreError) -> [NotifyItem]
    /// One item.
    func notification(id: String) async throws(StateStoreError) -> NotifyItem?
    /// Makes an unsent item pending and due now; whether it exists.
    func retryNotification(id: String, now: Date) async throws(StateStoreError) -> Bool
    /// Removes an item; false when there was none.
    func dropNotification(id: String) async throws(StateStoreError) -> Bool
}

/// What the `alert` library keeps of each alert, and acknowledgements of its episodes.
public protocol AlertStateStore: Sendable {
    /// The stored state of alert `id` and the acknowledgement of its current episode, if any.
    func alertRecord(id: String) async throws(StateStoreError) -> (status: AlertStatus, data: String)?
    /// Stores what the `alert` library knows of alert `id`.
    func saveAlert(_ status: AlertStatus, data: String, now: Date) async throws(StateStoreError)
    /// Acknowledges the current episode (the first acknowledgement wins); throws `AlertAckError`
    /// when the alert is unknown or not alerting.
    /// With `episode` (an ack link's), only that episode is acknowledged, and only once.
    func ackAlert(id: String, by: String, at: Date, episode: Int64?) async throws -> AlertStatus
    /// Snoozes the current episode until `until` (a later snooze of it replaces an earlier one);
    /// throws `AlertAckError` when the alert is unknown or not alerting.
    func snoozeAlert(id: String, by: String, at: Date, until: Date) async throws -> AlertStatus
    /// Every stored alert, by id.
    func alertStatuses() async throws(StateStoreError) -> [AlertStatus]
}

/// The append-only audit log of remote commands and the guard's ledger: reservations of one
/// site serialise across every process and machine using the database.
public protocol RemoteCommandAudit: RemoteCommandLedger {
    /// `reserve(site:keys:window:now:_:)` under a cluster lease: the same transaction first
    /// checks that `fence` is still the live holding and throws ``LeaseLost`` (nothing
    /// appended) when it is not (see ``FencedLedger``).
    func reserve<T: Sendable>(
        site: String, keys: [String], window: TimeInterval, now given: Date?, fence: LeaseFence?,
        _ decide: @escaping @Sendable (_ records: [RemoteCommandRecord], _ now: Date) -> (entry: AuditEntry, result: T)
    ) async throws -> T
    /// The site's in-flight, sent, failed and released commands since `since`.
    func recentCommands(site: String, since: Date) async throws -> [RemoteCommandRecord]
    /// The newest `limit` entries (of one site, or all), oldest first, each with the refusals
    /// counted on it (`audit_repeats`).
    func auditLog(site: String?, limit: Int) async throws -> [AuditRecordRow]
    /// The newest `limit` entries (of one site, or all), oldest first.
    func auditEntries(site: String?, limit: Int) async throws -> [AuditEntry]
    /// The command with ticket (or unique prefix, or Remote 2.0 id) `id`.
    func reservedCommand(_ id: String) async throws -> StateStore.ReservedCommand
    /// Releases a reservation once (`lookout remote release`), as a `released` audit entry.
    func releaseReservation(ticket: UUID, by: String, now: Date) async throws -> AuditEntry
}

/// The Nightscout sync mirror, with counts for `lookout status` and migrations.
public protocol MirrorStore: SyncStore {
    /// How many documents the mirror holds for a site and collection (tombstones included).
    func mirrorCount(site: String, collection: V3Collection) async throws -> Int
}
