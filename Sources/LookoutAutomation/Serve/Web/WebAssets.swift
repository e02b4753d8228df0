/// The web view's stylesheet and script, embedded in the binary (no tool chain, no CDN: the page
/// works offline). The script only adds live updates; the page reads the same without it.
enum WebAssets {
    /// `/web/assets/style.css`: responsive, dark when the system is, large touch targets.
    static let css = """
        :root { --bg: #fff; --fg: #111; --muted: #555; --card: #f3f4f6; --line: #d1d5db; --accent: #0b57d0;
          --bad: #b3261e; --warn: #8a5a00; --good: #146c2e; --band: rgba(20,108,46,.14); }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #0f1115; --fg: #e8eaed; --muted: #a8adb4; --card: #1b1e24; --line: #3a3f47; --accent: #8ab4f8;
            --bad: #f2b8b5; --warn: #f6c177; --good: #a8dab5; --band: rgba(168,218,181,.16); }
        }
        * { box-sizing: border-box; }
        body { margin: 0; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
        header { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .75rem 1rem;
          border-bottom: 1px solid var(--line); position: sticky; top: 0; background: var(--bg); z-index: 1; }
        header h1 { font-size: 1.25rem; margin: 0; }
        header form { margin-left: auto; }
        main { padding: 0 1rem 2rem; max-width: 70rem; margin: 0 auto; }
        h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
        h3 { font-size: 1rem; margin: 0 0 .25rem; }
        a { color: var(--accent); }
        a:focus-visible, button:focus-visible, input:focus-visible, summary:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        .cards { list-style: none; padding: 0; margin: 0; display: grid; gap: .75rem; grid-template-columns: repeat(auto-fill, minmax(18rem, 1fr)); }
        .card { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: .75rem; }
        .badge { font-size: .8rem; font-weight: 600; padding: .1rem .45rem; border-radius: 1rem; border: 1px solid currentColor; white-space: nowrap; }
        .state-firing .badge, .state-stale .badge, .state-crashed .badge, .state-quarantined .badge, .state-failing .badge { color: var(--bad); }
        .state-acked .badge, .state-snoozed .badge, .state-recovering .badge, .state-starting .badge { color: var(--warn); }
        .state-ok .badge, .state-running .badge, .state-sleeping .badge { color: var(--good); }
        .alert.state-firing { border-left: 6px solid var(--bad); }
        .small, .why, dd, .age { color: var(--muted); }
        .small { font-size: .875rem; }
        dl { display: grid; grid-template-columns: auto 1fr; gap: .1rem .75rem; margin: .25rem 0; }
        dt { font-weight: 600; } dd { margin: 0; }
        pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .8rem; }
        pre.log { max-height: 12rem; overflow-y: auto; margin: .25rem 0 0; padding: .5rem; background: var(--bg);
          border: 1px solid var(--line); border-radius: .375rem; }
        button { font: inherit; min-height: 44px; min-width: 44px; padding: .5rem 1rem; border-radius: .5rem;
          border: 1px solid var(--accent); background: var(--accent); color: var(--bg); font-weight: 600; cursor: pointer; }
        button.quiet { background: transparent; color: var(--accent); }
        input { font: inherit; min-height: 44px; padding: .25rem .5rem; border-radius: .375rem; border: 1px solid var(--line);
          background: var(--bg); color: var(--fg); max-width: 12rem; }
        form.ack, form.snooze { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-top: .5rem; }
        select { font: inherit; min-height: 44px; padding: .25rem .5rem; border-radius: .375rem; border: 1px solid var(--line);
          background: var(--bg); color: var(--fg); }
        .conn { margin: 0; font-size: .875rem; color: var(--muted); }
        .conn.live { color: var(--good); }
        .conn.lost { color: var(--bad); font-weight: 600; }
        .problem { color: var(--bad); }
        .current { font-size: 1.5rem; margin: .25rem 0; }
        .current.stale strong { text-decoration: line-through; color: var(--muted); }
        .arrow { font-size: 1.5rem; }
        .windows a { display: inline-block; min-height: 44px; min-width: 44px; padding: .6rem .5rem; }
        .windows a[aria-current] { font-weight: 700; }
        .chart { width: 100%; height: 15rem; background: var(--card); border: 1px solid var(--line); border-radius: .5rem; }
        .chart .target { fill: var(--band); }
        .chart .urgent { stroke: var(--bad); stroke-width: 1.5; stroke-dasharray: 6 4; }
        .chart .pt { fill: var(--good); }
        .chart .pt.low { fill: var(--bad); }
        .chart .pt.high { fill: var(--warn); }
        .chart .pt.old { fill: var(--muted); opacity: .5; }
        .chart .mark line { stroke: var(--accent); stroke-width: 1; stroke-dasharray: 2 3; }
        .chart .mark text { fill: var(--fg); font-size: 12px; }
        .chart .mark.carbs line { stroke: var(--warn); }
        .scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-size: .875rem; }
        th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        @media (max-width: 40rem) { main { padding: 0 .5rem 2rem; } .chart { height: 11rem; } }
        """

    /// `/web/assets/icon.svg`: the tab's icon.
    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#0b57d0"/>\
        <circle cx="8" cy="8" r="3" fill="#fff"/></svg>
        """

    /// `/web/assets/app.js`: server-sent events replace `<main>`; a lost connection shows and reconnects.
    static let js = """
        (function () {
          "use strict";
          var conn = document.getElementById("conn"), live = document.getElementById("live");
          if (!conn || !live || !window.EventSource) return;
          var retry = 1000, source = null;
          function show(text, cls) { conn.textContent = text; conn.className = "conn " + cls; }
          function connect() {
            var hours = live.getAttribute("data-hours") || "6";
            source = new EventSource("/web/events?hours=" + encodeURIComponent(hours));
            source.onopen = function () { retry = 1000; show("Live", "live"); };
            source.addEventListener("page", function (event) {
              var focused = document.activeElement && document.activeElement.id;
              var typed = {};
              live.querySelectorAll("input[name=by], select").forEach(function (i) { typed[i.id] = i.value; });
              live.innerHTML = event.data;
              live.querySelectorAll("input[name=by], select").forEach(function (i) { if (typed[i.id] !== undefined) i.value = typed[i.id]; });
              if (focused) { var again = document.getElementById(focused); if (again) again.focus(); }
              show("Live", "live");
            });
            source.onerror = function () {
              source.close();
              show("Connection lost: reconnecting…", "lost");
              setTimeout(connect, retry);
              retry = Math.min(retry * 2, 15000);
            };
          }
          connect();
        })();
        """
}
