import Foundation
import LookoutModules
import LookoutStore
import LookoutWire

/// The web view's HTML, rendered on the server: the whole page, and the `<main>` part alone that
/// server-sent events replace. Every text from a script, the store or a server goes through
/// `WebHTML.escape`. Forms that change state carry the session's CSRF token.
enum WebPage {
    /// A reading older than this looks stale (15 minutes).
    static let staleAfter: TimeInterval = 15 * 60

    /// The whole page for a signed-in person.
    static func page(_ snapshot: WebSnapshot, csrf: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>Lookout</title>
        <link rel="stylesheet" href="/web/assets/style.css"><link rel="icon" href="/web/assets/icon.svg">
        <script src="/web/assets/app.js" defer></script>
        </head><body>
        <header><h1>Lookout</h1>
        <p id="conn" class="conn" role="status" aria-live="polite">Updated \(WebHTML.clock(snapshot.now)) (reload to update)</p>
        <form method="post" action="/web/logout"><input type="hidden" name="csrf" value="\(WebHTML.escape(csrf))">
        <button type="submit" class="quiet">Sign out</button></form></header>
        <main id="live" data-hours="\(snapshot.hours)">
        \(main(snapshot, csrf: csrf))
        </main></body></html>
        """
    }

    /// The sign-in page (no session): how to get a link, nothing of the state.
    static func signIn(message: String? = nil) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>Lookout: sign in</title><link rel="stylesheet" href="/web/assets/style.css"><link rel="icon" href="/web/assets/icon.svg"></head><body>
        <header><h1>Lookout</h1></header><main><section aria-labelledby="signin"><h2 id="signin">Sign in</h2>
        \(message.map { "<p class=\"problem\">\(WebHTML.escape($0))</p>" } ?? "")
        <p>Run <code>lookout web login</code> on the computer running <code>lookout serve</code> and open the link
        it prints (it works once, for 10 minutes). A notification's acknowledge link works without signing in,
        for its own alert only.</p></section></main></body></html>
        """
    }

    /// The live part: scripts, alerts, glucose, safety log.
    static func main(_ snapshot: WebSnapshot, csrf: String) -> String {
        var html = ""
        if let problem = snapshot.storeProblem { html += "<p class=\"problem\" role=\"alert\">\(WebHTML.escape(problem))</p>\n" }
        html += alerts(snapshot, csrf: csrf)
        html += glucose(snapshot)
        html += boats(snapshot)
        html += scripts(snapshot)
        html += safety(snapshot)
        html += "<p class=\"small\" id=\"updated\" data-time=\"\(Int64(snapshot.now.timeIntervalSince1970 * 1000))\">"
            + "As of \(WebHTML.clock(snapshot.now))</p>\n"
        return html
    }

    static func alerts(_ snapshot: WebSnapshot, csrf: String) -> String {
        var html = "<section aria-labelledby=\"h-alerts\"><h2 id=\"h-alerts\">Alerts</h2>\n"
        if snapshot.alerts.isEmpty { html += "<p>No script has checked an alert yet.</p>\n" }
        html += "<ul class=\"cards\">\n"
        for alert in snapshot.alerts {
            let s = alert.status
            let id = WebHTML.escape(s.id)
            let state = WebHTML.escape(alertState(s))
            html += "<li class=\"card alert state-\(state) sev-\(WebHTML.escape(s.severity))\" id=\"alert-\(id)\" data-alert=\"\(id)\" data-state=\"\(state)\">"
            html += "<h3>\(WebHTML.escape(s.title)) <span class=\"badge\">\(state)</span></h3>"
            html += "<p class=\"small\">\(id) · \(WebHTML.escape(s.severity)) · \(WebHTML.escape(s.script)) · since \(WebHTML.clock(s.since))"
            html += " (\(WebHTML.ago(s.since, now: snapshot.now)))"
            if s.isAlerting { html += " · episode \(s.episode)" + (alert.level.map { " · escalation step \($0)" } ?? "") }
            html += "</p>"
            if let value = alert.value {
                html += "<p>Reading: <strong>\(WebHTML.number(value))</strong>"
                    + (alert.valueTime.map { " at \(WebHTML.clock($0)) (\(WebHTML.ago($0, now: snapshot.now)))" } ?? "") + "</p>"
            }
            if let why = s.why { html += "<p class=\"why\">\(WebHTML.escape(why))</p>" }
            let snoozed = s.snoozedUntil.flatMap { $0 > snapshot.now ? $0 : nil }
            if let until = snoozed, let by = s.snoozedBy {
                html += "<p class=\"snoozed\">Snoozed by \(WebHTML.escape(by)) until \(WebHTML.clock(until))"
                    + (s.snoozedAt.map { " (at \(WebHTML.clock($0)))" } ?? "") + "</p>"
            }
            if let by = s.ackedBy {
                html += "<p class=\"acked\">Acknowledged by \(WebHTML.escape(by))" + (s.ackedAt.map { " at \(WebHTML.clock($0))" } ?? "") + "</p>"
            } else if s.isAlerting {
                html += """
                    <form method="post" action="/web/ack/\(WebHTML.escapePath(s.id))" class="ack">\
                    <input type="hidden" name="csrf" value="\(WebHTML.escape(csrf))">\
                    <label for="by-\(id)">Acknowledged by</label> <input id="by-\(id)" name="by" value="web" maxlength="64" autocomplete="name">\
                    <button type="submit">Acknowledge</button></form>
                    """
                html += """
                    <form method="post" action="/web/snooze/\(WebHTML.escapePath(s.id))" class="snooze">\
                    <input type="hidden" name="csrf" value="\(WebHTML.escape(csrf))">\
                    <label for="snooze-by-\(id)">Snoozed by</label> <input id="snooze-by-\(id)" name="by" value="web" maxlength="64" autocomplete="name">\
                    <label for="snooze-for-\(id)">for</label> <select id="snooze-for-\(id)" name="minutes">\
                    \(WebRoutes.snoozeMinutes.map { "<option value=\"\($0)\"\($0 == 30 ? " selected" : "")>\($0 < 60 ? "\($0) min" : "\($0 / 60) h")</option>" }.joined())\
                    </select> <button type="submit" class="quiet">\(snoozed == nil ? "Snooze" : "Snooze again")</button></form>
                    """
            }
            html += "</li>\n"
        }
        return html + "</ul></section>\n"
    }

    static func glucose(_ snapshot: WebSnapshot) -> String {
        guard !snapshot.glucose.isEmpty else { return "" }
        var html = "<section aria-labelledby=\"h-glucose\"><h2 id=\"h-glucose\">Glucose</h2>\n<nav class=\"windows\" aria-label=\"Chart window\">"
        for hours in WebSnapshotSource.windows {
            html += hours == snapshot.hours ? "<a aria-current=\"page\" href=\"/web/?hours=\(hours)\">\(hours) h</a> "
                : "<a href=\"/web/?hours=\(hours)\">\(hours) h</a> "
        }
        html += "</nav>\n"
        for g in snapshot.glucose {
            let name = WebHTML.escape(g.profile)
            html += "<article class=\"profile\" data-profile=\"\(name)\"><h3>\(name)</h3>"
            if let problem = g.problem { html += "<p class=\"problem\">\(WebHTML.escape(problem))</p>" }
            if let last = g.readings.last {
                let age = snapshot.now.timeIntervalSince(last.time)
                let stale = age > staleAfter
                html += "<p class=\"current\(stale ? " stale" : "")\" data-mgdl=\"\(GlucoseChart.format(last.mgdl))\">"
                    + "<strong>\(WebGlucoseText.value(last.mgdl, mmol: g.mmol)) \(g.mmol ? "mmol/L" : "mg/dL")</strong> "
                    + "<span class=\"arrow\" aria-label=\"trend \(WebHTML.escape(last.direction ?? "unknown"))\">\(WebGlucoseText.arrow(last.direction))</span> "
                    + "<span class=\"age\">\(WebHTML.ago(last.time, now: snapshot.now))\(stale ? " (stale)" : "")</span></p>"
            } else if g.problem == nil {
                html += "<p class=\"current stale\">No readings in the last \(snapshot.hours) h.</p>"
            }
            html += GlucoseChart.svg(g, now: snapshot.now, hours: snapshot.hours)
            html += "<p class=\"small\">Band: target \(WebGlucoseText.value(g.targetLow, mmol: g.mmol))–\(WebGlucoseText.value(g.targetHigh, mmol: g.mmol)); "
                + "line: urgent low \(WebGlucoseText.value(g.urgentLow, mmol: g.mmol)) (\(g.mmol ? "mmol/L" : "mg/dL")). "
                + "Hover a point for both units; dashed lines mark boluses and carbs.</p></article>\n"
        }
        return html + "</section>\n"
    }

    static func boats(_ snapshot: WebSnapshot) -> String {
        guard !snapshot.boats.isEmpty else { return "" }
        var html = "<section aria-labelledby=\"h-boat\"><h2 id=\"h-boat\">Boat</h2>\n<ul class=\"cards\">\n"
        for boat in snapshot.boats {
            let name = WebHTML.escape(boat.profile)
            html += "<li class=\"card boat\" data-boat=\"\(name)\"><h3>\(name)</h3>"
            if let problem = boat.problem { html += "<p class=\"problem\">\(WebHTML.escape(problem))</p>" }
            html += "<dl>"
            for value in boat.values {
                html += "<dt>\(WebHTML.escape(value.label))</dt><dd data-path=\"\(WebHTML.escape(value.path))\">\(WebHTML.escape(value.text))"
                    + (value.time.map { " <span class=\"age\">(\(WebHTML.ago($0, now: Date())))</span>" } ?? "") + "</dd>"
            }
            html += "</dl></li>\n"
        }
        return html + "</ul></section>\n"
    }

    static func scripts(_ snapshot: WebSnapshot) -> String {
        var html = "<section aria-labelledby=\"h-scripts\"><h2 id=\"h-scripts\">Scripts</h2>\n<ul class=\"cards\">\n"
        for e in snapshot.health {
            let name = WebHTML.escape(e.name)
            let state = WebPage.stateWord(e)
            html += "<li class=\"card script state-\(state)\" data-script=\"\(name)\" data-state=\"\(state)\">"
            html += "<h3>\(name) <span class=\"badge\">\(state)</span></h3><dl>"
            if let at = e.lastSuccess { html += "<dt>Last success</dt><dd>\(WebHTML.clock(at)) (\(WebHTML.ago(at, now: Date())))</dd>" }
            if let next = e.nextRun { html += "<dt>Next run</dt><dd>\(WebHTML.clock(next))</dd>" }
            if let next = e.nextRestart { html += "<dt>Restart at</dt><dd>\(WebHTML.clock(next))</dd>" }
            html += "<dt>Restarts</dt><dd>\(e.restarts)</dd>"
            if let depth = e.outboxDepth { html += "<dt>Waiting</dt><dd>\(depth)</dd>" }
            if let connected = e.connected { html += "<dt>Connected</dt><dd>\(connected ? "yes" : "no")</dd>" }
            if let detail = e.detail { html += "<dt>Detail</dt><dd>\(WebHTML.escape(detail))</dd>" }
            html += "</dl>"
            if let error = e.lastError {
                html += "<details class=\"error\"><summary>Last error" + (e.lastErrorAt.map { " at \(WebHTML.clock($0))" } ?? "")
                    + ": \(WebHTML.escape(error))</summary>" + (e.traceback.map { "<pre>\(WebHTML.escape($0))</pre>" } ?? "") + "</details>"
            }
            if let lines = snapshot.lines[e.name], !lines.isEmpty {
                html += "<p class=\"small\" id=\"lines-\(name)\">Latest lines</p><pre class=\"log\" tabindex=\"0\" aria-labelledby=\"lines-\(name)\">"
                    + lines.map { "<span>\(WebHTML.escape($0))</span>" }.joined(separator: "\n") + "</pre>"
            }
            html += "</li>\n"
        }
        return html + "</ul></section>\n"
    }

    static func safety(_ snapshot: WebSnapshot) -> String {
        var html = "<section aria-labelledby=\"h-safety\"><h2 id=\"h-safety\">Safety log</h2>\n<h3>Remote commands</h3>\n"
        if snapshot.audit.isEmpty { html += "<p>No remote command yet.</p>\n" } else {
            html += "<div class=\"scroll\"><table><thead><tr><th scope=\"col\">Time</th><th scope=\"col\">Site</th><th scope=\"col\">Command</th>"
                + "<th scope=\"col\">Verdict</th><th scope=\"col\">Why</th></tr></thead><tbody>\n"
            for row in snapshot.audit {
                let e = row.entry
                html += "<tr><td>\(WebHTML.clock(e.time))</td><td>\(WebHTML.escape(e.site))</td><td>\(WebHTML.escape(String(describing: e.command)))</td>"
                    + "<td>\(WebHTML.escape(String(describing: e.verdict))) \(WebHTML.escape(String(describing: e.phase)))</td>"
                    + "<td>\(WebHTML.escape(e.reason ?? e.detail))" + (row.repeats > 0 ? " (repeated \(row.repeats) more times)" : "") + "</td></tr>\n"
            }
            html += "</tbody></table></div>\n"
        }
        html += "<h3>Outbox</h3>\n"
        if snapshot.outbox.isEmpty { html += "<p>Nothing waiting or failed.</p>\n" } else {
            html += "<div class=\"scroll\"><table><thead><tr><th scope=\"col\">Created</th><th scope=\"col\">Site</th><th scope=\"col\">Collection</th>"
                + "<th scope=\"col\">State</th><th scope=\"col\">Attempts</th><th scope=\"col\">Why</th></tr></thead><tbody>\n"
            for item in snapshot.outbox {
                html += "<tr><td>\(WebHTML.clock(item.created))</td><td>\(WebHTML.escape(item.site))</td><td>\(WebHTML.escape(item.collectionName))</td>"
                    + "<td>\(WebHTML.escape(item.state.rawValue))</td><td>\(item.attempts)</td><td>\(WebHTML.escape(item.lastError ?? ""))</td></tr>\n"
            }
            html += "</tbody></table></div>\n"
        }
        return html + "</section>\n"
    }

    /// How an alert's state reads on the page: `recovering` for one still firing whose condition no
    /// longer holds while its `clear` condition does not yet (the library's `why` says so), else the
    /// stored state (acknowledged and snoozed say more than recovering).
    static func alertState(_ status: AlertStatus) -> String {
        status.state == "firing" && status.why?.hasPrefix("recovering:") == true ? "recovering" : status.state
    }

    /// How an entry's state reads on the page: `sleeping` for a running script that only waits
    /// for its clock (timers, schedules, `sleep`), else the state's name.
    static func stateWord(_ entry: HealthRegistry.Entry) -> String {
        entry.state == .running && entry.sleeping == true ? "sleeping" : entry.state.rawValue
    }
}

/// HTML text helpers.
enum WebHTML {
    /// Escapes text for HTML content and quoted attributes.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// Percent-encodes one path segment.
    static func escapePath(_ text: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#%,;&=+\"'<>")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// "14:05:09" in the server's time zone.
    static func clock(_ date: Date) -> String {
        WallClock(date, in: .current).hourMinuteSecond
    }

    /// "3 min ago", "under a minute ago".
    static func ago(_ date: Date, now: Date) -> String {
        let seconds = Int(now.timeIntervalSince(date))
        // Minutes, not seconds: the live stream sends the page when it changes, not every second.
        if seconds < 0 { return "in \(max(1, -seconds / 60)) min" }
        if seconds < 60 { return "under a minute ago" }
        if seconds < 7200 { return "\(seconds / 60) min ago" }
        return "\(seconds / 3600) h ago"
    }

    /// A number without needless decimals.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%.1f", value)
    }
}
