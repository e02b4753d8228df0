"""Drives the web view of a running `lookout serve` in Debian's Chromium with Playwright
(WebViewBrowserTests starts serve, the Nightscout simulator and the webhook recorder, then runs
this). Reads its inputs from the environment, prints one JSON line of findings, exits 0 when every
check passed (else 1 with the reasons on stderr). Screenshots go to WEB_ARTIFACTS.
"""
import http.server
import json
import os
import sys
import threading
import time
import urllib.request

from playwright.sync_api import expect, sync_playwright

BASE = os.environ["WEB_BASE"]                      # http://127.0.0.1:PORT
LOGIN = os.environ["WEB_LOGIN_URL"]                # …/web/login?code=…
ARTIFACTS = os.environ["WEB_ARTIFACTS"]
EXPECTED = json.loads(os.environ["WEB_EXPECTED_MGDL"])  # the chart's values, oldest first
NS_URL = os.environ["WEB_NS_URL"]                  # the simulator, for one more reading
NS_TOKEN = os.environ["WEB_NS_TOKEN"]
CHROMIUM = os.environ.get("WEB_CHROMIUM", "/usr/bin/chromium")
ACK_LINK = os.environ["WEB_ACK_LINK"]              # urgent-low's ack link from the recorded notification
LOW_ACK_LINK = os.environ["WEB_LOW_ACK_LINK"]      # low's

failures = []
findings = {}


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


class Evil(http.server.BaseHTTPRequestHandler):
    """Another site: a form that posts an acknowledgement to the web view on load."""

    def do_GET(self):
        page = (f'<!doctype html><form id="f" method="post" action="{BASE}/web/ack/urgent-low">'
                '<input name="csrf" value="guess"><input name="by" value="attacker"></form>'
                '<script>document.getElementById("f").submit()</script>')
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(page.encode())

    def log_message(self, *args):
        pass


def chart_values(page):
    return page.eval_on_selector_all("svg.chart circle.pt", "cs => cs.map(c => parseFloat(c.dataset.mgdl))")


def add_reading(mgdl):
    body = json.dumps([{"type": "sgv", "sgv": mgdl, "date": int(time.time() * 1000), "direction": "Flat",
                        "device": "web-view-test"}]).encode()
    request = urllib.request.Request(f"{NS_URL}/api/v1/entries?token={NS_TOKEN}", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


def main():
    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    evil_url = f"http://127.0.0.1:{evil.server_address[1]}/"
    # localhost is another site than 127.0.0.1 for the browser: the evil page's origin differs.
    evil_url = evil_url.replace("127.0.0.1", "localhost")

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        console_errors = []

        def watch(page, label):
            page.on("console", lambda m: m.type == "error" and console_errors.append(f"{label}: {m.text}"))
            page.on("pageerror", lambda e: console_errors.append(f"{label}: {e}"))

        # 1. Sign in with the one-time link (desktop).
        desktop = browser.new_context(viewport={"width": 1280, "height": 900})
        page = desktop.new_page()
        watch(page, "desktop")
        page.goto(LOGIN)
        check(page.url.rstrip("/").endswith("/web"), f"after the login link the page is {page.url}")
        cookies = desktop.cookies()
        session = [c for c in cookies if c["name"] == "lookout_session"]
        if check(len(session) == 1, f"one session cookie, got {cookies}"):
            check(session[0]["httpOnly"] and session[0]["sameSite"] == "Strict", f"cookie flags: {session[0]}")
        # The code works once.
        again = browser.new_context()
        used = again.new_page().goto(LOGIN)
        check(used.status == 403, f"a used login code answered {used.status}")
        again.close()

        # 2. What a person sees: scripts, the alert firing, the chart.
        script_state = page.get_attribute('[data-script="low-alert.lua"]', "data-state")
        # Between its checks it only waits for its timer (sleeping); while checking, running.
        check(script_state in ("running", "sleeping"), f"low-alert.lua shows {script_state}")
        page.wait_for_selector('[data-alert="urgent-low"][data-state="firing"]', timeout=20000)
        values = chart_values(page)
        findings["chart"] = values
        check(values == EXPECTED, f"chart points {values} != data {EXPECTED}")
        check(page.locator(".profile .current strong").first.inner_text().startswith(str(int(EXPECTED[-1]))),
              "the current value is the newest reading")
        page.screenshot(path=os.path.join(ARTIFACTS, "desktop-firing.png"), full_page=True)

        # 3. Live: a new reading reaches the page without a reload.
        # (Locator waits only: the page's policy forbids eval, which wait_for_function needs.)
        page.wait_for_selector("#conn.live", timeout=15000)
        check(page.inner_text("#conn") == "Live", "the connection shows as live")
        page.evaluate("window.__sameDocument = true")
        started = time.time()
        add_reading(48)
        expect(page.locator("svg.chart circle.pt")).to_have_count(len(EXPECTED) + 1, timeout=20000)
        findings["live_seconds"] = round(time.time() - started, 2)
        check(page.evaluate("window.__sameDocument === true"), "the live update reloaded the page")
        check(chart_values(page)[-1] == 48, "the new reading is the chart's last point")

        # 4. A cross-site form post (another site, the signed-in browser): refused, nothing changes.
        evil_page = desktop.new_page()
        with evil_page.expect_response(lambda r: "/web/ack/" in r.url) as answer:
            evil_page.goto(evil_url)
        findings["cross_site_status"] = answer.value.status
        check(answer.value.status == 403, f"a cross-site form post answered {answer.value.status}")
        evil_page.close()

        # 5. A second browser without a session: no buttons, and a same-origin post is refused.
        stranger = browser.new_context(viewport={"width": 1280, "height": 900})
        other = stranger.new_page()
        first = other.goto(BASE + "/web/")
        check(first.status == 401, f"without a session /web/ answered {first.status}")
        check(other.locator("form.ack button").count() == 0, "a stranger sees an Acknowledge button")
        check("urgent-low" not in other.content(), "a stranger sees the alerts")
        status = other.evaluate("""async () => (await fetch('/web/ack/urgent-low', {method: 'POST',
            headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'csrf=x&by=stranger'})).status""")
        findings["stranger_post_status"] = status
        check(status == 401, f"a post without a session answered {status}")

        # A notification's ack link without a session: its own alert's page only; moved to another
        # alert, its button acknowledges nothing.
        link_page = stranger.new_page()
        link_page.goto(ACK_LINK)
        check("Acknowledge urgent-low" in link_page.content(), "the ack link's page names its alert")
        check("data-alert" not in link_page.content(), "the ack link's page shows other alerts")
        moved = ACK_LINK.replace("/ack/urgent-low?", "/ack/low?")
        link_page.goto(moved)
        with link_page.expect_response(lambda r: r.request.method == "POST") as moved_answer:
            link_page.click("button")
        findings["moved_link_status"] = moved_answer.value.status
        check(moved_answer.value.status == 403, f"urgent-low's link acknowledged 'low': {moved_answer.value.status}")
        # Low's own link, opened in this browser without a session: its button acknowledges low only.
        link_page.goto(LOW_ACK_LINK)
        with link_page.expect_response(lambda r: r.request.method == "POST") as low_answer:
            link_page.click("button")
        findings["low_link_status"] = low_answer.value.status
        check(low_answer.value.status == 200, f"low's ack link from a browser answered {low_answer.value.status}")
        stranger.close()

        # Still firing after both attempts.
        page.reload()
        check(page.get_attribute('[data-alert="urgent-low"]', "data-state") == "firing", "the alert changed without an ack")
        page.wait_for_selector('[data-alert="low"][data-state="acked"]', timeout=20000)
        check("Acknowledged by link" in page.inner_text('[data-alert="low"]'), "low names its link as who acknowledged")

        # 6. Acknowledge from the page, by keyboard.
        page.fill("#by-urgent-low", "anna")
        page.focus('[data-alert="urgent-low"] form.ack button')
        with page.expect_response(lambda r: "/web/ack/" in r.url) as answer:
            page.keyboard.press("Enter")
        findings["ack_status"] = answer.value.status
        if answer.value.status != 303:
            check(False, f"the page's ack answered {answer.value.status}: {answer.value.text()[:500]}")
        page.wait_for_selector('[data-alert="urgent-low"][data-state="acked"]', timeout=20000)
        check("Acknowledged by anna" in page.inner_text('[data-alert="urgent-low"]'), "the page names who acknowledged")
        findings["acked_at"] = time.time()
        page.screenshot(path=os.path.join(ARTIFACTS, "desktop-acked.png"), full_page=True)

        # 7. Phone-sized, same session: readable without sideways scrolling.
        phone = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True,
                                    has_touch=True, storage_state=desktop.storage_state(), color_scheme="dark")
        small = phone.new_page()
        watch(small, "phone")
        small.goto(BASE + "/web/")
        small.wait_for_selector('[data-alert="urgent-low"][data-state="acked"]')
        overflow = small.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        check(overflow <= 0, f"the phone page scrolls sideways by {overflow} px")
        small.screenshot(path=os.path.join(ARTIFACTS, "phone-acked.png"), full_page=True)
        small.screenshot(path=os.path.join(ARTIFACTS, "phone-top.png"))
        phone.close()

        check(console_errors == [], f"console errors: {console_errors}")
        findings["console_errors"] = list(console_errors)

        # 8. Signing out in another tab ends the session: the open page shows the connection lost.
        other_tab = desktop.new_page()
        other_tab.goto(BASE + "/web/")
        other_tab.click("header form button")
        other_tab.wait_for_selector("#signin")
        page.wait_for_selector("#conn.lost", timeout=20000)
        check(page.inner_text("#conn").startswith("Connection lost"), "the lost connection is not said")

        browser.close()
    evil.shutdown()


try:
    main()
except Exception as error:  # a timeout or a missing element is a failure with its reason
    failures.append(f"{type(error).__name__}: {error}")
print(json.dumps(findings))
for failure in failures:
    print("FAIL: " + failure, file=sys.stderr)
sys.exit(1 if failures else 0)
