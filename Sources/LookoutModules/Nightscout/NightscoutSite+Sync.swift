import Foundation
import LookoutWire
import LookoutConfig
import LookoutStore
import Lua
import NightscoutKit

/// Sync: `home:sync(collection)`, `home:full_sync(collection, {from=…, to=…})` and
/// `home:mirror(collection [, opts])` over the local mirror in the state database (the store the
/// outbox uses).
extension NightscoutSite {
    static var syncMethods: [String: LuaBinding] {
        [
            "sync": { call in try sync(call) },
            "full_sync": { call in try fullSync(call) },
            "mirror": { call in try mirror(call) },
        ]
    }

    /// What a sync needs off the Lua thread: the client, its queue and the store opener.
    private struct SyncTarget: Sendable {
        let client: NightscoutClient
        let queue: String
        let outboxes: NightscoutOutboxes.Opener

        init(_ site: NightscoutSite) {
            client = site.client
            queue = site.queue
            outboxes = site.outboxes
        }

        /// The process's manager of this client's queue in its state database.
        func manager() throws -> SyncManager {
            try NightscoutSyncManagers.manager(client: client, queue: queue, store: try outboxes.openStore())
        }
    }

    /// `home:sync(collection)`: pulls v3 history after the stored cursor into the mirror.
    static func sync(_ call: LuaCall) throws -> LuaReturn {
        let target = SyncTarget(try site(call))
        let collection = try collection(call, 1)
        if call.count > 1 { throw call.argumentError(2, "sync takes only a collection") }
        return try wait(call, "nightscout sync \(collection.rawValue)", {
            try await requireV3(target.client, for: "sync")
            return try await target.manager().sync(collection)
        }) { stack, report in
            stack.push(reportValue(report, full: false))
            return 1
        }
    }

    /// `home:full_sync(collection [, {from=…, to=…}])`: history, then the date range by search.
    static func fullSync(_ call: LuaCall) throws -> LuaReturn {
        let target = SyncTarget(try site(call))
        let collection = try collection(call, 1)
        let opts = try call.options(2)
        if let unknown = opts.keys.sorted().first(where: { !["from", "since", "to", "last"].contains($0) }) {
            throw call.argumentError(2, "unknown option '\(unknown)' (known: from, since, to, last)")
        }
        let now = call.engine.clock.now()
        let (from, through) = try timeRange(call, 2, opts, now: now)
        let lower = from ?? Date(timeIntervalSince1970: 0), upper = through ?? now
        if upper < lower { throw call.argumentError(2, "opts.to is before opts.from") }
        return try wait(call, "nightscout full_sync \(collection.rawValue)", {
            try await target.manager().fullSync(collection, from: lower, through: upper)
        }) { stack, report in
            stack.push(reportValue(report, full: true))
            return 1
        }
    }

    /// `home:mirror(collection, opts)` reads the mirror; `home:mirror(collection)` returns a
    /// function taking `opts` (so `home:mirror "entries" {since = …}` reads too).
    static func mirror(_ call: LuaCall) throws -> LuaReturn {
        let site = try site(call)
        let collection = try collection(call, 1)
        if call.count >= 2 { return try mirrorQuery(call, argument: 2, site: site, collection: collection) }
        call.engine.pushFunction("mirror", on: call.stack) { inner in
            try mirrorQuery(inner, argument: 1, site: site, collection: collection)
        }
        return .values(1)
    }

    /// The options `mirror` accepts.
    static let mirrorOptions: Set<String> = ["from", "since", "to", "last", "count", "limit", "deleted"]

    /// Reads the mirror with the options in argument `n` (no network).
    static func mirrorQuery(_ call: LuaCall, argument n: Int, site: NightscoutSite, collection: V3Collection) throws -> LuaReturn {
        let target = SyncTarget(site)
        let opts = try call.options(n)
        if let unknown = opts.keys.sorted().first(where: { !mirrorOptions.contains($0) }) {
            throw call.argumentError(n, "unknown option '\(unknown)' (known: \(mirrorOptions.sorted().joined(separator: ", ")))")
        }
        let (from, through) = try timeRange(call, n, opts, now: call.engine.clock.now())
        if let from, let through, through < from { throw call.argumentError(n, "opts.to is before opts.from") }
        if opts["count"] != nil, opts["limit"] != nil { throw call.argumentError(n, "opts.count and opts.limit cannot both be given") }
        var limit: Int?
        if let value = opts["count"] ?? opts["limit"] {
            guard let c = value.int, c >= 1, c <= Int64(Int32.max) else {
                throw call.argumentError(n, "opts.\(opts["count"] != nil ? "count" : "limit"): expected a positive integer")
            }
            limit = Int(c)
        }
        var includeDeleted = false
        if let value = opts["deleted"] {
            guard case .bool(let b) = value else { throw call.argumentError(n, "opts.deleted: expected a boolean") }
            includeDeleted = b
        }
        let engine = call.engine
        let (count, deleted) = (limit, includeDeleted)
        return try wait(call, "nightscout mirror \(collection.rawValue)", {
            let documents = try await target.manager().mirror(collection, from: from, through: through, limit: count,
                                                              includeDeleted: deleted)
            var body = Data("[".utf8)
            for (i, raw) in documents.enumerated() {
                if i > 0 { body.append(UInt8(ascii: ",")) }
                body.append(raw)
            }
            body.append(UInt8(ascii: "]"))
            return NightscoutDocuments.Bodies(api: .v1, bodies: [body])
        }) { stack, answer in
            NightscoutDocuments.pushList(answer, collection: collection, stack: stack, engine: engine)
        }
    }

    /// `from` (or its alias `since`), `to` and `last` of an options table.
    static func timeRange(_ call: LuaCall, _ n: Int, _ opts: [String: LuaValue], now: Date) throws(LuaRaise) -> (Date?, Date?) {
        if opts["from"] != nil, opts["since"] != nil { throw call.argumentError(n, "opts.from and opts.since cannot both be given") }
        do throws(LuaRaise) {
            var from = try NightscoutTimeArgument.optionalDate(opts["from"], what: "opts.from")
            if from == nil { from = try NightscoutTimeArgument.optionalDate(opts["since"], what: "opts.since") }
            let through = try NightscoutTimeArgument.optionalDate(opts["to"], what: "opts.to")
            if let last = opts["last"] {
                guard from == nil else { throw LuaRaise("opts.last and opts.from cannot both be given") }
                from = now.addingTimeInterval(-(try NightscoutTimeArgument.duration(last, what: "opts.last")))
            }
            return (from, through)
        } catch {
            throw call.argumentError(n, error.message)
        }
    }

    /// A report as the table scripts get (lists encode as JSON arrays even when empty).
    static func reportValue(_ report: SyncReport, full: Bool) -> LuaValue {
        func list(_ ids: [String]) -> LuaValue { .array(ids.map { .text($0) }) }
        var fields: [String: LuaValue] = [
            "added": list(report.added),
            "updated": list(report.updated),
            "deleted": list(report.deleted),
            "unchanged": .int(Int64(report.unchanged)),
            "pages": .int(Int64(report.pages)),
            "documents": .int(Int64(report.documents)),
        ]
        if let watermark = report.cursor?.watermark { fields["watermark"] = .int(watermark) }
        if full {
            fields["missed_by_history"] = list(report.missedByHistory)
            fields["missing_on_server"] = list(report.missingOnServer)
            if let api = report.reconciledWith { fields["api"] = .text(api.rawValue) }
        }
        return .object(fields)
    }
}

/// The process's sync managers: one per state database and queue (site and credential
/// identity), so two scripts syncing one collection share the manager (which refuses a second
/// concurrent sync of a collection instead of racing it).
enum NightscoutSyncManagers {
    private static let managers = Locked<[String: SyncManager]>([:])

    /// The manager of `queue` in `store`, created on first use (and again when the pooled client
    /// was replaced after a configuration change).
    static func manager(client: NightscoutClient, queue: String, store: any StateBackend) throws -> SyncManager {
        let key = store.identity + "\n" + queue
        return try managers.withLock { all in
            if let existing = all[key], existing.client === client { return existing }
            let manager = try SyncManager(client: client, store: store)
            all[key] = manager
            return manager
        }
    }
}

/// Sync for Swift callers outside the Lua host (the `lookout sync` command).
public enum SyncService {
    /// The process's `SyncManager` for config profile `profile` (`[nightscout.NAME]`), mirroring
    /// into the state database at `paths`.
    /// - Throws: `SyncServiceError.configuration` when the profile is missing or invalid, or the
    ///   state database cannot be opened (messages name no secret).
    public static func manager(profile: String, config: HostConfig, paths: LookoutPaths,
                               environment: [String: String] = ProcessInfo.processInfo.environment) throws -> SyncManager {
        let connection = try connection(profile, config: config, environment: environment)
        let store: any StateBackend
        do { store = try StateBackends.shared(paths: paths) } catch {
            throw SyncServiceError.configuration(error.description)
        }
        return try manager(connection, store: store)
    }

    /// The process's `SyncManager` for config profile `profile`, mirroring into `store`.
    public static func manager(profile: String, config: HostConfig, store: any StateBackend,
                               environment: [String: String] = ProcessInfo.processInfo.environment) throws -> SyncManager {
        try manager(try connection(profile, config: config, environment: environment), store: store)
    }

    /// A failure in plain words without any credential (the text scripts see as `err.message`).
    public static func message(for error: any Error) -> String {
        LuaErrorInfo.nightscout(error).message
    }

    private static func connection(_ profile: String, config: HostConfig, environment: [String: String]) throws -> NightscoutConnection {
        do {
            return try NightscoutConnection.profile(profile, config: config, environment: environment)
        } catch let error as LuaErrorInfo {
            throw SyncServiceError.configuration(error.message)
        } catch {
            throw SyncServiceError.configuration(String(describing: error))
        }
    }

    private static func manager(_ c: NightscoutConnection, store: any StateBackend) throws -> SyncManager {
        let queue = OutboxItem.siteKey(for: c.configuration) + "#" + c.identity
        let client = NightscoutClientPool.client(key: queue, configuration: c.configuration, timeout: c.timeout)
        return try NightscoutSyncManagers.manager(client: client, queue: queue, store: store)
    }
}

/// Why `SyncService` cannot make a manager.
public enum SyncServiceError: Error, CustomStringConvertible, Equatable {
    /// The profile is missing or invalid, or the state database cannot be opened.
    case configuration(String)

    public var description: String {
        switch self {
        case .configuration(let message): return message
        }
    }
}
