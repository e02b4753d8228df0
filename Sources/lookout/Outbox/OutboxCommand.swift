import ArgumentParser
import Foundation
import LookoutAutomation
import LookoutModules
import LookoutStore
import NightscoutKit

/// `lookout outbox [list|retry ID|drop ID]`: the upload queue from the shell.
struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "Show the upload queue; retry or drop an item.",
        discussion: """
            Every upload a script makes is stored here before it is sent. Pending items are retried
            with growing waits while a Lookout process uses their site; failed items (refused by the
            server with 400, 401, 403 or 422) stay until retried or dropped.
            """,
        subcommands: [List.self, Retry.self, Drop.self],
        defaultSubcommand: List.self)

    /// Opens the state database.
    static func store(_ environment: HostEnvironment) throws -> any StateBackend {
        do { return try StateBackends.shared(paths: environment.paths) } catch { throw HostSetupError(description: error.description) }
    }

    /// `lookout outbox list [--all | --state S]`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List pending and failed uploads (oldest first).")

        @Option(help: "Only items in this state: pending, failed or sent.")
        var state: String?

        @Flag(help: "Every item, sent ones included.")
        var all = false

        func run() async throws {
            let environment = try HostEnvironment.load()
            var states: Set<OutboxItem.State> = [.pending, .failed]
            if all { states = Set(OutboxItem.State.allCases) }
            if let state {
                guard let s = OutboxItem.State(rawValue: state) else {
                    throw ValidationError("--state must be pending, failed or sent")
                }
                states = [s]
            }
            let store = try OutboxCommand.store(environment)
            let items = try await store.items(site: nil, states: states, limit: 100_000)
            print(OutboxCommand.table(items))
            let notifications = try await store.notifications(states: OutboxCommand.notifyStates(states), limit: 100_000)
            if !notifications.isEmpty {
                print("\nnotifications:\n" + TextTable.render(
                    ["ID", "STATE", "TRIES", "CHANNEL", "TITLE", "QUEUED", "WHEN", "LAST ERROR"], NotifyService.rows(notifications)))
            }
        }
    }

    /// `lookout outbox retry ID`.
    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "retry",
            abstract: "Try an item again now (sent at once when the config has the profile that queued it).")

        @Argument(help: "The item's id (from `lookout outbox`).")
        var id: String

        func run() async throws {
            let environment = try HostEnvironment.load()
            let store = try OutboxCommand.store(environment)
            if try await store.notification(id: id) != nil {
                let logger = environment.bootstrapLogging(verbose: false)
                guard let item = try await NotifyService.retry(id, store: store, config: environment.config, logger: logger) else {
                    throw HostSetupError(description: "no outbox item \(id)")
                }
                print(TextTable.render(["ID", "STATE", "TRIES", "CHANNEL", "TITLE", "QUEUED", "WHEN", "LAST ERROR"], NotifyService.rows([item])))
                if item.state == .failed { throw ExitCode(1) }
                return
            }
            let item = try await OutboxCommand.report {
                try await OutboxService.retry(id, store: try OutboxCommand.store(environment), config: environment.config)
            }
            print(OutboxCommand.table([item]))
            if item.state == .failed { throw ExitCode(1) }
        }
    }

    /// `lookout outbox drop ID`.
    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "drop", abstract: "Remove an item for good (it will not be sent).")

        @Argument(help: "The item's id (from `lookout outbox`).")
        var id: String

        func run() async throws {
            let environment = try HostEnvironment.load()
            let store = try OutboxCommand.store(environment)
            if try await store.dropNotification(id: id) {
                print("dropped \(id)")
                return
            }
            try await OutboxCommand.report { try await OutboxService.drop(id, store: store) }
            print("dropped \(id)")
        }
    }

    /// The notification states matching upload states (`sending` counts as pending).
    static func notifyStates(_ states: Set<OutboxItem.State>) -> Set<NotifyItem.State> {
        var out = Set<NotifyItem.State>()
        if states.contains(.pending) { out.formUnion([.pending, .sending]) }
        if states.contains(.failed) { out.insert(.failed) }
        if states.contains(.sent) { out.insert(.sent) }
        return out
    }

    /// Runs `body`; an unknown id is a usage error naming it.
    static func report<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let error as OutboxServiceError { throw HostSetupError(description: error.description) }
    }

    /// Items as an aligned table, or a line saying the queue is empty.
    static func table(_ items: [OutboxItem]) -> String {
        guard !items.isEmpty else { return "the outbox is empty" }
        let time = ISO8601DateFormatter()
        let rows = items.map { item -> [String] in
            let when = item.state == .pending ? "next " + time.string(from: item.nextAttempt)
                : item.state == .sent ? "sent " + time.string(from: item.sentAt ?? item.created) : ""
            return [item.identifier, item.state.rawValue, String(item.attempts), item.collectionName, item.site,
                    time.string(from: item.created), when, item.lastError ?? ""]
        }
        let header = ["ID", "STATE", "TRIES", "COLLECTION", "QUEUE", "QUEUED", "WHEN", "LAST ERROR"]
        return TextTable.render(header, rows)
    }
}
