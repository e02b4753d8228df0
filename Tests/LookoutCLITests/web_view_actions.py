"""Drives the web view of a running `lookout serve` in Debian's Chromium with Playwright, for
WebViewActionsBrowserTests (which starts serve, the Nightscout simulator and the webhook recorder).
WEB_MODE picks the checks: `snooze` (snooze urgent-low from the page), `lines` (a script's lines,
live and redacted), `sleeping` (a script waiting on its timer), `recovering` (urgent-low back above 55
but not yet above 65). Prints one JSON line of findings,
exits 0 when every check passed (else 1 with the reasons on stderr).
"""
import json
import os
import sys
import time

from playwright.sync_api import expect, sync_playwright

MODE = os.environ["WEB_MODE"]
BASE = os.environ["WEB_BASE"]
LOGIN = os.environ["WEB_LOGIN_URL"]
ARTIFACTS = os.environ["WEB_ARTIFACTS"]
CHROMIUM = os.environ.get("WEB_CHROMIUM", "/usr/bin/chromium")

failures = []
findings = {}


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def post_status(page, path, body):
    """A same-origin form post from the signed-in page (fetch sends the session cookie)."""
    return page.evaluate("""async ([path, body]) => (await fetch(path, {method: 'POST',
        headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: body, redirect: 'manual'})).status""",
                         [path, body])


def snooze(page):
    page.wait_for_selector('[data-alert="urgent-low"][data-state="firing"]', timeout=20000)
    card = '[data-alert="urgent-low"]'
    check(page.locator(card + " form.snooze button").count() == 1, "no Snooze button on the firing alert")
    # Without the session's CSRF token: refused, nothing changes.
    findings["no_csrf_status"] = post_status(page, "/web/snooze/urgent-low", "by=mallory&minutes=15")
    check(findings["no_csrf_status"] == 403, f"a snooze without the CSRF token answered {findings['no_csrf_status']}")
    csrf = page.get_attribute(card + " form.snooze input[name=csrf]", "value")
    findings["bad_minutes_status"] = post_status(page, "/web/snooze/urgent-low", f"csrf={csrf}&by=mallory&minutes=100000")
    check(findings["bad_minutes_status"] == 400, f"a snooze of 100000 min answered {findings['bad_minutes_status']}")
    page.reload()
    check(page.get_attribute(card, "data-state") == "firing", "the alert changed without a valid snooze")
    check("mallory" not in page.inner_text(card), "a refused snooze shows on the page")

    # Snooze for 15 minutes as ben, by keyboard.
    page.fill("#snooze-by-urgent-low", "ben")
    page.select_option("#snooze-for-urgent-low", "15")
    page.focus(card + " form.snooze button")
    with page.expect_response(lambda r: "/web/snooze/" in r.url) as answer:
        page.keyboard.press("Enter")
    findings["snooze_status"] = answer.value.status
    check(answer.value.status == 303, f"the page's snooze answered {answer.value.status}")
    page.wait_for_selector(card + '[data-state="snoozed"]', timeout=20000)
    text = page.inner_text(card)
    check("Snoozed by ben until" in text, f"the page does not say who snoozed until when: {text}")
    check(page.locator(card + " form.ack button").count() == 1, "a snoozed alert can no longer be acknowledged")
    page.screenshot(path=os.path.join(ARTIFACTS, "desktop-snoozed.png"), full_page=True)


def lines(page):
    secret = os.environ["WEB_SECRET"]
    marker = os.environ["WEB_MARKER"]
    log = '[data-script="chatty.lua"] pre.log'
    page.wait_for_selector("#conn.live", timeout=15000)
    expect(page.locator(log)).to_contain_text(marker + " ", timeout=20000)
    page.evaluate("window.__sameDocument = true")
    first = page.inner_text(log)
    newest = max(int(line.rsplit(" ", 1)[1]) for line in first.splitlines() if marker in line)
    findings["newest_at_load"] = newest
    # Live: later lines arrive without a reload.
    expect(page.locator(log)).to_contain_text(f"{marker} {newest + 2}", timeout=20000)
    check(page.evaluate("window.__sameDocument === true"), "the new lines reloaded the page")
    text = page.inner_text(log)
    findings["lines"] = text.splitlines()[-3:]
    check("the site's token is \u2039redacted\u203a" in text, f"the printed token is not shown redacted: {text}")
    check(secret not in page.content(), "the page shows a configured secret")
    check(len(text.splitlines()) <= 20, f"the page shows {len(text.splitlines())} lines of one script")
    check(first != text, "the lines did not change")
    page.screenshot(path=os.path.join(ARTIFACTS, "desktop-lines.png"), full_page=True)


def sleeping(page):
    expect(page.locator('[data-script="sleepy.lua"]')).to_have_attribute("data-state", "sleeping", timeout=20000)
    check(page.inner_text('[data-script="sleepy.lua"] .badge') == "sleeping", "the badge does not say sleeping")
    expect(page.locator('[data-script="waiting.lua"]')).to_have_attribute("data-state", "running", timeout=20000)
    findings["states"] = {name: page.get_attribute(f'[data-script="{name}"]', "data-state")
                          for name in ["sleepy.lua", "waiting.lua", "low-alert.lua"]}
    page.screenshot(path=os.path.join(ARTIFACTS, "desktop-sleeping.png"), full_page=True)


def recovering(page):
    card = '[data-alert="urgent-low"]'
    expect(page.locator(card)).to_have_attribute("data-state", "recovering", timeout=20000)
    text = page.inner_text(card)
    check("recovering: not below 55" in text, f"the card does not say why it is recovering: {text}")
    check(page.locator(card + " form.ack button").count() == 1, "a recovering alert can no longer be acknowledged")
    findings["urgent_low"] = text.splitlines()[:3]
    page.screenshot(path=os.path.join(ARTIFACTS, "desktop-recovering.png"), full_page=True)


def main():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        console_errors = []
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.on("console", lambda m: m.type == "error" and console_errors.append(m.text))
        page.on("pageerror", lambda e: console_errors.append(str(e)))
        page.goto(LOGIN)
        check(page.url.rstrip("/").endswith("/web"), f"after the login link the page is {page.url}")
        {"snooze": snooze, "lines": lines, "sleeping": sleeping, "recovering": recovering}[MODE](page)
        # The refused posts above log their 4xx answers as console errors; nothing else may.
        unexpected = [e for e in console_errors if "status of 40" not in e]
        check(unexpected == [], f"console errors: {unexpected}")
        browser.close()


try:
    main()
except Exception as error:  # a timeout or a missing element is a failure with its reason
    failures.append(f"{type(error).__name__}: {error}")
print(json.dumps(findings))
for failure in failures:
    print("FAIL: " + failure, file=sys.stderr)
sys.exit(1 if failures else 0)
