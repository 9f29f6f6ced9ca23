/// The console's stylesheet, script and icon, compiled into the binary and served from `/console/assets/`.
enum ConsoleAssets {
    /// The pages' icon: a broadcast mark on the accent colour, drawn for a browser tab.
    static let icon = #"""
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
        <rect width="32" height="32" rx="7" fill="#0a61d1"/>
        <circle cx="16" cy="16" r="3.5" fill="#fff"/>
        <path d="M10.3 21.7a8 8 0 0 1 0-11.4M21.7 10.3a8 8 0 0 1 0 11.4" fill="none" stroke="#fff" stroke-width="2.4" stroke-linecap="round"/>
        <path d="M6.8 25.2a13 13 0 0 1 0-18.4M25.2 6.8a13 13 0 0 1 0 18.4" fill="none" stroke="#fff" stroke-width="2.4" stroke-linecap="round" opacity=".6"/>
        </svg>

        """#

    /// Light and dark by the viewer's setting, readable on a phone, visible keyboard focus.
    static let stylesheet = #"""
        :root { --bg: #f7f7f8; --card: #ffffff; --text: #1c1c1f; --muted: #62626b; --line: #dedee3; --accent: #0a61d1;
          --ok: #1d7f3a; --bad: #c0262d; --warn: #a15c00; --sent: #2f9e55; --failed: #d9434a; --track: #e6e6ea;
          font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
          color-scheme: light dark; }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #141416; --card: #1e1e22; --text: #ececf0; --muted: #a0a0aa; --line: #34343a; --accent: #5aa2ff;
            --ok: #58c27a; --bad: #ff6b70; --warn: #f0a742; --sent: #4cc173; --failed: #ff6b70; --track: #34343a; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); color: var(--text); font-size: 15px; line-height: 1.5; }
        a { color: var(--accent); }
        :focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        .skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: var(--card); padding: 6px 10px; }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
        .top { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 20px; padding: 10px 20px; background: var(--card);
          border-bottom: 1px solid var(--line); }
        .brand { font-weight: 700; font-size: 17px; text-decoration: none; color: var(--text); }
        .top nav ul { display: flex; flex-wrap: wrap; gap: 4px; list-style: none; margin: 0; padding: 0; }
        .top nav a { display: block; padding: 5px 10px; border-radius: 6px; text-decoration: none; color: var(--text); }
        .top nav a[aria-current="page"] { background: var(--accent); color: #fff; }
        .who { margin-left: auto; display: flex; align-items: center; gap: 8px; color: var(--muted); }
        .who form { display: inline; }
        .role { border: 1px solid var(--line); border-radius: 10px; padding: 0 8px; font-size: 13px; }
        main { max-width: 1180px; margin: 0 auto; padding: 16px 20px 48px; }
        h1 { font-size: 24px; margin: 8px 0 16px; } h2 { font-size: 16px; margin: 0 0 10px; } h3 { font-size: 14px; margin: 12px 0 4px; }
        .card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 16px; margin: 0 0 16px; }
        .narrow { max-width: 420px; }
        .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(230px, 1fr)); gap: 16px; margin-bottom: 16px; }
        .grid .card { margin: 0; }
        .big { font-size: 26px; font-weight: 650; margin: 0; overflow-wrap: break-word; } .big.name { font-size: 19px; }
        .muted, .hint { color: var(--muted); } .hint { font-size: 13px; }
        .ok { color: var(--ok); }
        .notice { border-left: 4px solid var(--ok); background: var(--card); padding: 10px 14px; border-radius: 6px; }
        .problem { border-left: 4px solid var(--bad); background: var(--card); padding: 10px 14px; border-radius: 6px; }
        .warning { border-left: 4px solid var(--warn); }
        label { display: block; font-weight: 600; margin: 8px 0 4px; }
        input, select, textarea { font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--line);
          border-radius: 6px; padding: 7px 9px; width: 100%; max-width: 100%; }
        textarea { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
        button { font: inherit; cursor: pointer; border: 1px solid var(--accent); background: var(--accent); color: #fff;
          border-radius: 6px; padding: 7px 14px; margin-top: 10px; }
        button.small { padding: 3px 10px; margin: 0; font-size: 13px; }
        button.danger { background: var(--bad); border-color: var(--bad); }
        button.link { background: none; border: none; color: var(--accent); padding: 0; margin: 0; text-decoration: underline; }
        button.copy { background: none; color: var(--accent); border: 1px solid var(--line); padding: 0 6px; margin: 0 0 0 6px;
          font-size: 12px; }
        .inline-form { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 12px; }
        .inline-form button { margin-top: 0; }
        .inline-form h2 { width: 100%; } .inline-form label { margin: 0; } .inline-form select, .inline-form input { width: auto; }
        label.check { font-weight: 400; font-size: 13px; } label.check input { width: auto; margin: 0 4px 0 0; }
        .search { display: grid; grid-template-columns: repeat(auto-fit, minmax(180px, 1fr)); gap: 8px 12px; align-items: end; }
        .search label { margin-top: 0; }
        .table-wrap { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 10px; margin-bottom: 16px; }
        .card .table-wrap { border: none; margin: 0; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { font-size: 13px; color: var(--muted); font-weight: 600; }
        code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; overflow-wrap: anywhere; }
        code.short { display: inline-block; max-width: 16ch; overflow: hidden; text-overflow: ellipsis; vertical-align: bottom; white-space: nowrap; }
        .state { display: inline-block; border-radius: 10px; padding: 0 8px; font-size: 13px; background: var(--track); }
        .state-active, .state-sent, .state-delivered, .state-requeued { background: color-mix(in srgb, var(--ok) 20%, transparent); }
        .state-failed, .state-gaveUp, .state-ended, .state-dismissed { background: color-mix(in srgb, var(--bad) 20%, transparent); }
        .state-pending, .state-dispatching, .state-retrying, .state-starting, .state-stale { background: color-mix(in srgb, var(--warn) 22%, transparent); }
        .mark { font-size: 12px; border-radius: 4px; padding: 0 6px; color: #fff; }
        .mark.missing { background: var(--bad); } .mark.orphan { background: var(--warn); }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 6px 16px; margin: 0; }
        dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
        ol.updates, ol.timeline { list-style: none; padding: 0; margin: 0; }
        ol.updates li, ol.timeline li { padding: 10px 0; border-bottom: 1px solid var(--line); }
        ol.timeline .when { color: var(--muted); font-size: 13px; margin-right: 6px; }
        ol.timeline .push { display: block; margin-top: 2px; font-size: 14px; }
        progress { width: min(420px, 100%); height: 12px; vertical-align: middle; accent-color: var(--sent); }
        .progress span { margin-left: 8px; font-size: 14px; }
        ul.reasons { margin: 4px 0 0; padding-left: 18px; font-size: 14px; }
        svg.chart { width: 100%; max-width: 720px; height: auto; }
        svg.chart rect.sent { fill: var(--sent); } svg.chart rect.failed { fill: var(--failed); }
        svg.chart .axis { stroke: var(--line); } svg.chart text { fill: var(--muted); font-size: 8px; }
        svg.gauge { width: 100%; height: 14px; } svg.gauge .track { fill: var(--track); } svg.gauge .fill { fill: var(--accent); }
        svg.gauge .fill.low { fill: var(--warn); }
        .dot { display: inline-block; width: 10px; height: 10px; border-radius: 5px; } .dot.sent { background: var(--sent); } .dot.failed { background: var(--failed); }
        @media (max-width: 640px) {
          main { padding: 12px; } .who { margin-left: 0; width: 100%; }
          dl.facts { grid-template-columns: 1fr; } dl.facts dt { margin-top: 6px; }
          .inline-form select, .inline-form input { width: 100%; }
        }
        """#

    /// Times in the viewer's zone, copy buttons, and live progress of updates being sent (Server-Sent Events). Every
    /// page works without it.
    static let script = #"""
        "use strict";
        document.addEventListener("DOMContentLoaded", function () {
          document.querySelectorAll("time[datetime]").forEach(function (element) {
            var date = new Date(element.getAttribute("datetime"));
            if (!isNaN(date)) { element.title = element.textContent; element.textContent = date.toLocaleString(); }
          });
          document.querySelectorAll("button.copy").forEach(function (button) {
            button.hidden = false;
            button.addEventListener("click", function () {
              navigator.clipboard.writeText(button.dataset.copy).then(function () {
                button.textContent = "Copied";
                setTimeout(function () { button.textContent = "Copy"; }, 1500);
              });
            });
          });
          document.querySelectorAll("[data-progress]").forEach(function (box) {
            var source = new EventSource(box.dataset.progress);
            var item = box.closest(".update");
            source.addEventListener("progress", function (event) {
              var p = JSON.parse(event.data);
              box.querySelector("progress").value = p.percent;
              box.querySelector("[data-field=summary]").textContent =
                p.percent + "% · " + p.sent + " sent · " + p.failed + " failed · " + p.pending + " pending" +
                (p.superseded ? " · " + p.superseded + " superseded" : "");
              if (item) {
                var status = item.querySelector("[data-field=status]");
                status.textContent = p.status;
                status.className = "state state-" + p.status;
              }
              var list = box.querySelector("[data-field=reasons]");
              list.textContent = "";
              Object.keys(p.failedByReason).forEach(function (reason) {
                var entry = document.createElement("li");
                entry.textContent = reason + ": " + p.failedByReason[reason];
                list.appendChild(entry);
              });
              if (p.done) { source.close(); box.dataset.done = "true"; }
            });
            source.addEventListener("ended", function (event) {
              var why = { revoked: "its key was revoked", signed_out: "it signed out", expired: "it expired" }[JSON.parse(event.data).reason];
              source.close();
              box.dataset.done = "true";
              box.querySelector("[data-field=summary]").textContent = "This session ended (" + (why || "it ended") + "): sign in again.";
            });
            source.addEventListener("error", function () { if (box.dataset.done) { source.close(); } });
          });
        });
        """#
}
