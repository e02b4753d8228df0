import Foundation
import LookoutStore

/// The status server's alert acknowledgement: the ack link of a notification
/// (`AckLink`, `…/ack/<id>?episode=E&expires=X&token=T`).
/// - `POST` acknowledges episode E of the alert, once, while the link is valid (`?by=NAME`
///   names who, default `link`); without a valid token nothing is acknowledged (403).
/// - `GET` (a link opened in a browser, a Telegram or Pushover button) changes nothing: it answers
///   a small page whose button POSTs the same link (same origin, so the door lets it through).
public enum AckRoutes {
    /// The routes over `acks`, signing with `key` (read when a request comes), on the clock `now`.
    public static func routes(acks: AlertAcks, key: @escaping @Sendable () throws -> AckLinkKey,
                              now: @escaping @Sendable () -> Date = { Date() }) -> [StatusRoute] {
        [
            StatusRoute(method: "POST", pathPrefix: "/ack/") { request in
                guard let id = alertID(request.path) else { return .text("expected POST /ack/<alert id>?episode=…&token=…", status: 400) }
                let by = queryValue(request.query, "by") ?? "link"
                let signer: AckLinkKey
                do { signer = try key() } catch { return .json(["error": String(describing: error)], status: 503) }
                let (status, json) = await acks.linkAck(id: id, query: request.query, by: by, key: signer, at: now())
                return StatusResponse(status: status, contentType: "application/json", body: Data((json + "\n").utf8))
            },
            StatusRoute(method: "GET", pathPrefix: "/ack/") { request in
                guard let id = alertID(request.path) else { return .text("expected GET /ack/<alert id>?episode=…&token=…", status: 400) }
                return page(id: id, episode: queryValue(request.query, "episode"))
            },
        ]
    }

    /// The alert id of `/ack/<id>` (percent-decoded), nil when empty or with a `/`.
    static func alertID(_ path: String) -> String? {
        let id = String(path.dropFirst("/ack/".count)).removingPercentEncoding ?? ""
        return id.isEmpty || id.contains("/") ? nil : id
    }

    static func queryValue(_ query: String?, _ name: String) -> String? {
        URLComponents(string: "?" + (query ?? ""))?.queryItems?.first { $0.name == name }?.value
    }

    /// The confirmation page: one button posting the link it was opened with.
    static func page(id: String, episode: String?) -> StatusResponse {
        let title = "Acknowledge \(escape(id))" + (episode.map { " (episode \(escape($0)))" } ?? "")
        let html = """
            <!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
            <title>\(title)</title></head><body><h1>\(title)</h1>
            <form method="post"><button type="submit" style="font-size:1.5em">Acknowledge</button></form>
            <p>Stops this episode's repeats and escalation. The link works for this episode only.</p></body></html>
            """
        return StatusResponse(status: 200, contentType: "text/html; charset=utf-8", body: Data(html.utf8))
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
