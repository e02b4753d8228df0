import Foundation
import XCTest

@testable import LookoutAutomation
@testable import LookoutConfig
@testable import LookoutModules
@testable import LookoutStore

/// How each channel carries an alert episode's ack link (issue 24 §1), and that its token never
/// shows in an error about the request.
final class NotifyAckLinkTests: XCTestCase {
    func testEachChannelCarriesTheLinkAndErrorsHideItsToken() throws {
        let config = try HostConfig(text: """
            [notify.hook]
            type = "webhook"
            url = "http://127.0.0.1:9/hook"
            [notify.phone]
            type = "ntfy"
            url = "http://127.0.0.1:9"
            topic = "alerts"
            [notify.po]
            type = "pushover"
            url = "http://127.0.0.1:9"
            token_env = "PO_TOKEN"
            user_key_env = "PO_USER"
            [notify.tg]
            type = "telegram"
            url = "http://127.0.0.1:9"
            token_env = "TG_TOKEN"
            chat_id = 42
            """)
        let environment = ["PO_TOKEN": "po-token", "PO_USER": "po-user", "TG_TOKEN": "tg-token"]
        let link = AckLinkKey(bytes: Array(repeating: 7, count: 32)).link(alert: "urgent-low", episode: 3, now: Date())
        let ack = NotifyAckLink(url: link.url(base: "http://127.0.0.1:8765"), token: link.token, isPublic: false)
        let message = NotifyMessage(id: "alert:urgent-low:3:1:x", channel: "hook", title: "Urgent low", message: "52 mg/dL",
                                    severity: "urgent", alertID: "urgent-low", kind: "firing", time: 0, episode: 3)
        func request(_ channel: String, _ ack: NotifyAckLink?) throws -> NotifyHTTPRequest {
            try NotifyHTTPRequest.make(message, channel: try NotifyChannel.named(channel, config: config), config: config,
                                       environment: environment, ack: ack)
        }
        func body(_ r: NotifyHTTPRequest) -> String { String(decoding: r.request.body ?? [], as: UTF8.self) }

        let hook = try request("hook", ack)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(hook.request.body ?? [])) as? [String: Any])
        XCTAssertEqual(json["ack_url"] as? String, ack.url)
        XCTAssertEqual(json["episode"] as? Int, 3)
        XCTAssertEqual(NotifyHTTPRequest.redact("server said: \(body(hook))", hook.secrets).contains(link.token), false)
        let ntfy = try request("phone", ack)
        XCTAssertTrue(ntfy.request.headers.contains { $0.name == "Actions" && $0.value == "http, Acknowledge, \(ack.url), method=POST, clear=true" })
        let pushover = try request("po", ack)
        XCTAssertTrue(body(pushover).contains("url_title=Acknowledge"), body(pushover))
        XCTAssertTrue(body(pushover).contains(link.token), body(pushover))
        let telegram = try request("tg", ack)
        XCTAssertTrue(body(telegram).contains("Acknowledge: "), body(telegram))
        XCTAssertFalse(body(telegram).contains("inline_keyboard"), "a loopback link is no Telegram button")
        let publicTelegram = try request("tg", NotifyAckLink(url: "https://lookout.example" + link.pathAndQuery, token: link.token, isPublic: true))
        XCTAssertTrue(body(publicTelegram).contains("inline_keyboard"), body(publicTelegram))
        // Without a link, nothing of it.
        for channel in ["hook", "phone", "po", "tg"] {
            let plain = try request(channel, nil)
            XCTAssertFalse(body(plain).contains("/ack/") || plain.request.headers.contains { $0.name == "Actions" }, channel)
        }
    }
}
