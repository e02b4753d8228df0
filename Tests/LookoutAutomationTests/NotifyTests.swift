import Foundation
import Logging
import LookoutSim
import LookoutTestSupport
import Lua
import NightscoutKit
import SignalKKit
import XCTest

@testable import LookoutConfig
@testable import LookoutStore
@testable import LookoutModules
@testable import LookoutAutomation

/// `notify` channels against local peers, and the durable notification queue.
final class NotifyTests: XCTestCase {
    private static let telegramToken = "123456:SECRET-telegram-token"
    private static let pushoverToken = "pushover-app-SECRET"
    private static let pushoverUser = "pushover-user-SECRET"
    private static let hookToken = "hook-SECRET"
    private let environment = ["TG_TOKEN": telegramToken, "PO_TOKEN": pushoverToken, "PO_USER": pushoverUser, "HOOK_TOKEN": hookToken,
                               "SLACK_URL": "http://127.0.0.1:9/services/T000/SECRET-slack-path"]

    /// Channels on the peer, each under its own path prefix `/<test>/…`.
    private func config(_ base: String, _ test: String, extra: String = "") throws -> HostConfig {
        try HostConfig(text: """
            [notify.hook]
            type = "webhook"
            url = "\(base)/\(test)/hook"
            token_env = "HOOK_TOKEN"
            [notify.ntfy]
            type = "ntfy"
            url = "\(base)/\(test)/ntfy"
            topic = "boat alerts"
            [notify.push]
            type = "pushover"
            url = "\(base)/\(test)/pushover"
            token_env = "PO_TOKEN"
            user_key_env = "PO_USER"
            [notify.tg]
            type = "telegram"
            url = "\(base)/\(test)/tg"
            token_env = "TG_TOKEN"
            chat_id = -100123
            [notify.quiet]
            type = "webhook"
            url = "\(base)/\(test)/quiet"
            dry_run = true
            [notify.down]
            type = "webhook"
            url = "http://127.0.0.1:9/\(test)"
            \(extra)
            """)
    }

    private func run(_ source: String, config: HostConfig, store: StateStore, sideEffects: SideEffects = .live,
                     file: StaticString = #filePath, line: UInt = #line) async throws -> [String] {
        let (transcript, outcome) = try await runLua("local notify = require 'notify'\n" + source, modules: [
            NotifyModule(config: config, environment: environment, logger: Logger(label: "test"), sideEffects: sideEffects,
                         openStore: { store }),
        ])
        XCTAssertEqual(transcript.errors.map(\.description), [], file: file, line: line)
        XCTAssertEqual(outcome.exitCode, 0, file: file, line: line)
        return transcript.lines
    }

    func testEachHTTPChannelSendsItsServicesRequest() async throws {
        let (peer, base) = try await NotifyPeer.get()
        let store = try StateStore()
        let lines = try await run("""
            for _, name in ipairs { "hook", "ntfy", "push", "tg" } do
              local item = assert(notify.send(name, { title = "Urgent low", message = "BG 52", severity = "urgent", alert_id = "low" }))
              print(name, item.state, item.attempts)
            end
            """, config: try config(base, "shape"), store: store)
        XCTAssertEqual(lines, ["hook\tsent\t1", "ntfy\tsent\t1", "push\tsent\t1", "tg\tsent\t1"])

        let hook = try XCTUnwrap(peer.requests("/shape/hook").first)
        XCTAssertEqual(hook.headers["authorization"], "Bearer \(Self.hookToken)")
        XCTAssertEqual(hook.headers["content-type"], "application/json")
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(hook.body.utf8)) as? [String: Any])
        XCTAssertEqual(json["title"] as? String, "Urgent low")
        XCTAssertEqual(json["message"] as? String, "BG 52")
        XCTAssertEqual(json["severity"] as? String, "urgent")
        XCTAssertEqual(json["alert_id"] as? String, "low")
        XCTAssertNotNil(json["id"] as? String)

        let ntfy = try XCTUnwrap(peer.requests("/shape/ntfy").first)
        XCTAssertEqual(ntfy.path, "/shape/ntfy/boat%20alerts")
        XCTAssertEqual(ntfy.body, "BG 52")
        XCTAssertEqual(ntfy.headers["title"], "Urgent low")
        XCTAssertEqual(ntfy.headers["priority"], "5")

        let push = try XCTUnwrap(peer.requests("/shape/pushover").first)
        XCTAssertEqual(push.path, "/shape/pushover/1/messages.json")
        XCTAssertEqual(push.headers["content-type"], "application/x-www-form-urlencoded")
        let form = Dictionary(uniqueKeysWithValues: push.body.split(separator: "&").map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        })
        XCTAssertEqual(form["token"], Self.pushoverToken)
        XCTAssertEqual(form["user"], Self.pushoverUser)
        XCTAssertEqual(form["title"], "Urgent low")
        XCTAssertEqual(form["message"], "BG 52")
        XCTAssertEqual(form["priority"], "2")
        XCTAssertEqual(form["retry"], "60")
        XCTAssertEqual(form["expire"], "3600")

        let tg = try XCTUnwrap(peer.requests("/shape/tg").first)
        XCTAssertEqual(tg.path, "/shape/tg/bot\(Self.telegramToken)/sendMessage")
        let message = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(tg.body.utf8)) as? [String: Any])
        XCTAssertEqual(message["chat_id"] as? Int, -100123)
        XCTAssertEqual(message["text"] as? String, "Urgent low: BG 52")

        let sent = try await store.notifications(states: [.sent], limit: 10)
        XCTAssertEqual(sent.map(\.channel).sorted(), ["hook", "ntfy", "push", "tg"])
    }

    func testSecretsNeverAppearInErrorsOrTheQueue() async throws {
        let (peer, base) = try await NotifyPeer.get()
        peer.answer(401, for: "/secret/tg")
        let store = try StateStore()
        let config = try HostConfig(text: """
            [notify.tg]
            type = "telegram"
            url = "\(base)/secret/tg"
            token_env = "TG_TOKEN"
            chat_id = 1
            [notify.tgdown]
            type = "telegram"
            url = "http://127.0.0.1:9"
            token_env = "TG_TOKEN"
            chat_id = 1
            [notify.slack]
            type = "webhook"
            url_env = "SLACK_URL"
            """)
        let lines = try await run("""
            local item, err = notify.send("tg", { message = "hello" })
            print(item, err.code, err.status, err.message)
            local pending = assert(notify.send("tgdown", { message = "hello" }))
            print(pending.state, pending.error)
            local slack = assert(notify.send("slack", { message = "hello" }))
            print(slack.state, slack.error)
            """, config: config, store: store)
        guard lines.count == 3 else { return XCTFail("\(lines)") }
        XCTAssertTrue(lines[2].hasPrefix("pending\tPOST ***: cannot connect"), lines[2])
        XCTAssertTrue(lines[0].hasPrefix("nil\tnotify\t401\t"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix("pending\t"), lines[1])
        let listed = try await store.notifications(states: Set(NotifyItem.State.allCases), limit: 10)
        let everything = (lines + listed.map { "\($0.lastError ?? "") \($0.message)" }).joined(separator: "\n")
        XCTAssertFalse(everything.contains("SECRET"), everything)
        XCTAssertTrue(everything.contains("/bot***/sendMessage"), everything)
    }

    func testDryRunAndRecordedRunsSendNothing() async throws {
        let (peer, base) = try await NotifyPeer.get()
        let store = try StateStore()
        let log = SideEffectLog()
        let config = try config(base, "dry")
        let dry = try await run("print(notify.send('quiet', { message = 'not sent' }).state)", config: config, store: store)
        let recorded = try await run("""
            print(notify.send('hook', { message = 'not sent either', severity = 'warning', alert_id = 'x' }).state)
            """, config: config, store: store, sideEffects: .record(log))
        XCTAssertEqual(dry, ["dry_run"])
        XCTAssertEqual(recorded, ["recorded"])
        XCTAssertEqual(peer.requests("/dry").count, 0)
        XCTAssertEqual(log.all.map(\.kind), ["notify"])
        XCTAssertEqual(log.all.first?.target, "hook")
        XCTAssertEqual(log.all.first?.details["alert_id"], "x")
        XCTAssertFalse(log.all.first?.details.values.contains { $0.contains("SECRET") } ?? true)
        let queued = try await store.notifications(states: Set(NotifyItem.State.allCases), limit: 10)
        XCTAssertEqual(queued.count, 0)
    }

    func testBadChannelsAndMessagesAreNamed() async throws {
        let (_, base) = try await NotifyPeer.get()
        let config = try config(base, "bad", extra: "[notify.odd]\ntype = \"carrier-pigeon\"")
        let lines = try await run("""
            local _, err = notify.send("nope", { message = "x" })
            print(err.code, err.message)
            _, err = notify.send("odd", { message = "x" })
            print(err.code, err.message)
            print(pcall(notify.send, "hook", { message = "x", colour = "red" }))
            print(pcall(notify.send, "hook", { message = "x", severity = "loud" }))
            print(pcall(notify.send, "hook", { title = "no message" }))
            """, config: config, store: try StateStore())
        guard lines.count == 5 else { return XCTFail("\(lines)") }
        XCTAssertTrue(lines[0].hasPrefix("config\tno [notify.nope] channel in"), lines[0])
        XCTAssertTrue(lines[1].contains("carrier-pigeon"), lines[1])
        XCTAssertTrue(lines[2].contains("unknown option 'colour'"), lines[2])
        XCTAssertTrue(lines[3].contains("msg.severity"), lines[3])
        XCTAssertTrue(lines[4].contains("msg.message: required"), lines[4])
    }

    // MARK: The durable queue

    func testQueuedOnceIsDeliveredOnceEvenWhenSentTwiceOrConcurrently() async throws {
        let (peer, base) = try await NotifyPeer.get()
        let store = try StateStore()
        let config = try config(base, "once")
        let lines = try await run("""
            for i = 1, 3 do print(notify.send("hook", { message = "once", id = "alert:x:1:1:hook" }).state) end
            """, config: config, store: store)
        XCTAssertEqual(lines, ["sent", "sent", "sent"])
        XCTAssertEqual(peer.requests("/once/hook").count, 1)

        // Two senders (two processes) attempting one new item at the same time: one sends.
        let sender = NotifySender(config: config, environment: environment, logger: Logger(label: "test"), openStore: { store })
        let message = NotifyMessage(id: "race", channel: "hook", title: "t", message: "race", severity: "info", kind: "message", time: 0)
        _ = try await store.insertNotification(message, now: Date())
        let a = NotifyOutbox(store: store, sender: sender), b = NotifyOutbox(store: store, sender: sender)
        async let first = a.attempt("race")
        async let second = b.attempt("race")
        _ = await (first, second)
        XCTAssertEqual(peer.requests("/once/hook").filter { $0.body.contains("\"race\"") }.count, 1)
    }

    func testPendingNotificationSurvivesACrashAndIsSentOnce() async throws {
        let (peer, base) = try await NotifyPeer.get()
        peer.answer(503, for: "/crash/hook")
        let directory = NSTemporaryDirectory() + "lookout-notify-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = try config(base, "crash")
        let first = try StateStore(path: directory + "/state.sqlite3")
        let lines = try await run("""
            local item = assert(notify.send("hook", { message = "survives", id = "crash-1" }))
            print(item.state, item.status)
            """, config: config, store: first)
        XCTAssertEqual(lines, ["pending\t503"])

        // A second process opens the same file after the first died with a claim held on another
        // item: the expired claim and the pending item are both sent, once each.
        peer.answer(200, for: "/crash/hook")
        let second = try StateStore(path: directory + "/state.sqlite3")
        let claimed = NotifyMessage(id: "crash-2", channel: "hook", title: "", message: "claimed", severity: "info", kind: "message", time: 0)
        _ = try await second.insertNotification(claimed, now: Date())
        let stale = try await second.claimNotification(id: "crash-2", now: Date().addingTimeInterval(-600), force: true)
        XCTAssertEqual(stale?.state, .sending)
        let sender = NotifySender(config: config, environment: environment, logger: Logger(label: "test"), openStore: { second })
        _ = try await second.retryNotification(id: "crash-1", now: Date())  // due now (the backoff has not passed)
        await NotifyOutbox(store: second, sender: sender).drain()
        let sent = try await second.notifications(states: [.sent], limit: 10)
        XCTAssertEqual(sent.map(\.id).sorted(), ["crash-1", "crash-2"])
        let bodies = peer.requests("/crash/hook").map(\.body)
        XCTAssertEqual(bodies.filter { $0.contains("survives") }.count, 2, "one 503, one delivery")
        XCTAssertEqual(bodies.filter { $0.contains("claimed") }.count, 1)
    }

    // MARK: Nightscout and Signal K

    func testNightscoutAnnouncementGoesThroughTheSiteOutbox() async throws {
        let site = try await NightscoutModuleSim.shared.start()
        let store = try StateStore()
        let config = try HostConfig(text: """
            [nightscout.home]
            url = "\(site.url.absoluteString)"
            token_env = "NS_TOKEN"
            [notify.ns]
            type = "nightscout"
            site = "home"
            """)
        let environment = ["NS_TOKEN": site.adminToken]
        let (transcript, _) = try await runLua("""
            local item = assert(require("notify").send("ns", { title = "Urgent low", message = "BG 52 (notify-test)", id = "ns-1" }))
            print(item.state)
            """, modules: [NotifyModule(config: config, environment: environment, logger: Logger(label: "test"), openStore: { store })])
        XCTAssertEqual(transcript.lines, ["sent"])
        let identifier = NotifySender.nightscoutIdentifier("ns-1")
        let client = NightscoutClient(configuration: try NightscoutConnection.profile("home", config: config, environment: environment).configuration)
        let deadline = Date().addingTimeInterval(20)
        var found: Treatment?
        while Date() < deadline, found == nil {
            let item = try await store.outboxItems(identifier: identifier).first
            if item?.state == .sent {
                found = try await client.read(Treatment.self, .treatments, identifier: identifier)
            } else {
                try await Task.sleep(for: .milliseconds(20))  // polling with a deadline
            }
        }
        let treatment = try XCTUnwrap(found, "the announcement reached the site")
        XCTAssertEqual(treatment.eventType, .announcement)
        XCTAssertEqual(treatment.notes, "Urgent low: BG 52 (notify-test)")
    }

    func testSignalKNotificationIsPublishedAndConfirmed() async throws {
        let sim = try await SignalKTestSim.module.get()
        let store = try StateStore()
        let config = try HostConfig(text: """
            [signalk.boat]
            url = "\(sim.base.absoluteString)"
            [notify.boat]
            type = "signalk"
            server = "boat"
            path = "notifications.lookout"
            """)
        let (transcript, _) = try await runLua("""
            local item = assert(require("notify").send("boat", { title = "Urgent low", message = "BG 52", severity = "urgent", alert_id = "sk-low" }))
            print(item.state)
            """, modules: [NotifyModule(config: config, environment: [:], logger: Logger(label: "test"), openStore: { store })])
        XCTAssertEqual(transcript.lines, ["sent"])
        let rest = SignalKREST(server: sim.base)
        let value = try await rest.get("notifications.lookout.sk-low")
        XCTAssertEqual(value["value"]?["state"]?.stringValue ?? value["state"]?.stringValue, "alarm")
    }
}
