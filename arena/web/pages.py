"""The website's HTML, rendered on the server from :mod:`.views` data (no script, no build step)."""

from __future__ import annotations

import json
import time
from html import escape
from urllib.parse import quote

from .chart import sparkline


CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#222;background:#fff}
header{background:#263238;color:#fff;padding:.6em 1.2em;display:flex;gap:1.4em;align-items:baseline}
header a{color:#cfe3ff;text-decoration:none} header strong{font-size:1.15em}
main{padding:1em 1.2em;max-width:1100px}
table{border-collapse:collapse;margin:.5em 0 1.2em} th,td{padding:.25em .7em;border-bottom:1px solid #e3e3e3;text-align:left}
th{background:#f3f5f7} td.num{text-align:right;font-variant-numeric:tabular-nums}
.muted{color:#777} .ok{color:#1b7f2a} .bad{color:#b3261e} .pending{color:#a66b00}
pre{background:#f6f8fa;padding:.7em;overflow:auto;max-height:28em;font-size:13px}
iframe{width:100%;height:78vh;border:1px solid #ccc}
form p{margin:.6em 0}
td.trend{padding:0 .4em;vertical-align:middle} svg.spark{display:block}
"""


def esc(value) -> str:
    """Text for HTML."""
    return escape("" if value is None else str(value))


def link_bot(base: str, text: str | None = None) -> str:
    """A link to the page of bot ``base``."""
    return f'<a href="/bot/{quote(base, safe="")}">{esc(text or base)}</a>'

def link_author(name: str | None) -> str:
    """A link to the page of author ``name`` (``-`` when there is none)."""
    if not name or name == "-":
        return "-"
    return f'<a href="/author/{quote(name, safe="")}">{esc(name)}</a>'


def layout(title: str, body: str, refresh_s: int | None = None) -> str:
    """A whole page."""
    meta = f'<meta http-equiv="refresh" content="{refresh_s}">' if refresh_s else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">{meta}"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
            "<header><strong>Project L league</strong><a href=\"/\">Leaderboard</a><a href=\"/live\">Live games</a>"
            "<a href=\"/rules\">Rules</a><a href=\"/submit\">Submit a bot</a><a href=\"/me\">Your bots</a><a href=\"/docs/writing-a-bot\">Writing a bot</a>"
            "<a href=\"/docs/protocol\">Protocol</a><a href=\"/api\">API</a></header>"
            f"<main><h1>{esc(title)}</h1>{body}</main></body></html>\n")


def elo_cells(row: dict | None) -> tuple[str, str]:
    if not row or row.get("elo") is None:
        return "-", "-"
    ci = row.get("elo_ci")
    return f"{row['elo']:+.1f}", (f"[{ci[0]:+.0f}, {ci[1]:+.0f}]" if ci else "-")


def when_s(t: float | None) -> str:
    """A time to the second (when the ratings were fitted)."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t)) if t else "-"


def when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t)) if t else "-"


def games_table(games: list[dict]) -> str:
    """Games as rows: id, seats with scores, rounds, faults."""
    if not games:
        return '<p class="muted">No games yet.</p>'
    rows = []
    for g in games:
        seats = " vs ".join(f"{link_bot(x['bot'].split('@')[0], x['bot'])} {x['score']}" + (" (forfeited)" if x["forfeited"] else "")
                            for x in g["seats"])
        faults = sum(x["faults"] for x in g["seats"])
        rows.append(f'<tr><td><a href="/game/{g["id"]}">#{g["id"]}</a></td><td>{seats}</td>'
                    f'<td class="num">{esc(g["rounds"])}</td><td class="num">{faults or ""}</td>'
                    f'<td class="muted">{when(g.get("played"))}</td></tr>')
    return ("<table><tr><th>game</th><th>seats and scores</th><th>rounds</th><th>faults</th><th>played</th></tr>"
            + "".join(rows) + "</table>")


#: How the leaderboard may be sorted (``/?sort=``): each a key of a row, best first.
SORTS = {
    "rating": lambda r: (r["elo"] is None, -(r["elo"] or 0.0), r["name"]),
    "games": lambda r: (-r["games"], r["name"]),
    "faults": lambda r: (-r["faults"], r["name"]),
    "bot": lambda r: (r["base"].lower(), r["name"]),
    "author": lambda r: (str(r["author"]).lower(), r["name"]),
}


def sort_rows(tab: dict, order: str) -> dict:
    """The table with its rows sorted by ``order`` (one of :data:`SORTS`)."""
    return dict(tab, table=sorted(tab["table"], key=SORTS[order]), sort=order)


def leaderboard_page(tab: dict, recent: list[dict], subs: list[dict], player_status: str, live: int = 0) -> str:
    """``/``: the table, the newest games and submissions."""
    rows = []
    for i, r in enumerate(tab["table"], 1):
        elo, ci = elo_cells(r)
        cls = ' class="muted"' if r["status"] == "retired" else ""
        rows.append(f"<tr{cls}><td class=\"num\">{i}</td><td>{link_bot(r['base'])}</td><td>{esc(r['version'])}</td>"
                    f"<td>{link_author(r['author'])}</td><td class=\"num\">{elo}</td><td class=\"num\">{ci}</td>"
                    f"<td class=\"trend\">{sparkline(r.get('trend') or [], r['name'])}</td>"
                    f"<td class=\"num\">{r['games']}</td><td class=\"num\">{r['faults']}</td>"
                    f"<td>{esc(r['form']) or '-'}</td><td>{esc(r['status'])}</td></tr>")
    def head(label: str, key: str) -> str:
        return label if tab.get("sort", "rating") == key else f'<a href="/?sort={key}">{label}</a>'

    table = ("<table id=\"leaderboard\"><tr><th>#</th>"
             f"<th>{head('bot', 'bot')}</th><th>version</th><th>{head('author', 'author')}</th>"
             f"<th>{head('rating', 'rating')}</th><th>95% interval</th><th>rating over time</th>"
             f"<th>{head('games', 'games')}</th>"
             f"<th>{head('faults', 'faults')}</th><th>form</th><th>status</th></tr>"
             + "".join(rows) + "</table>") if rows else '<p class="muted">No bots yet.</p>'
    method = (f"Ratings: {esc(tab['ratings']['method'])} on {tab.get('fitted_games', tab['games'])} games, anchored at "
              f"{esc(tab['ratings']['anchor'])} = 0, fitted {when_s(tab.get('fitted'))}." if tab["ratings"]
              else "No ratings yet.")
    sub_rows = "".join(f'<tr><td><a href="/submission/{s["id"]}">{esc(s["entry"])}</a></td><td>{link_author(s["author"])}</td>'
                       f'<td>{status_tag(s["status"], s.get("withdrawn"))}</td><td class="muted">{when(s["submitted"])}</td></tr>'
                       for s in subs)
    return layout("Leaderboard", f"{table}<p class=\"muted\">{method} Background play: {esc(player_status)}; "
                  f"<a href=\"/live\">{live} game{'' if live == 1 else 's'} in progress</a>.</p>"
                  f"<h2>Recent games</h2>{games_table(recent)}"
                  + (f"<h2>Recent submissions</h2><table>{sub_rows}</table>" if subs else ""), refresh_s=60)


def status_tag(status: str, withdrawn=None) -> str:
    """A submission's status, coloured (an accepted version its author took out says so)."""
    if status == "accepted" and withdrawn:
        return '<span class="muted">accepted, withdrawn</span>'
    cls = "ok" if status == "accepted" else "pending" if status in ("queued", "building", "checking") else "bad"
    return f'<span class="{cls}">{esc(status)}</span>'


def check_section(report: dict | None) -> str:
    """A conformance check's report: each check passed or failed with its detail, or the error."""
    report = report or {}
    checks = "".join(f'<tr><td class="{"ok" if c.get("ok") else "bad"}">{"PASS" if c.get("ok") else "FAIL"}</td>'
                     f'<td>{esc(c.get("name"))}</td><td>{esc(c.get("detail"))}'
                     + (f'<br><code>{esc(c["offending"])}</code>' if c.get("offending") else "") + "</td></tr>"
                     for c in report.get("checks", []) if isinstance(c, dict))
    return (f"<table>{checks}</table>" if checks else "") + (
        f'<p class="bad">{esc(report["error"])}</p><pre>{esc(report.get("log", ""))}</pre>' if report.get("error") else "")


def submission_in_progress_page(s: dict) -> str:
    """``/submission/ID`` of a submission not finished yet, for anyone but its author: its
    status only (the name of a submission in progress is not published)."""
    body = (f"<p>Status: {status_tag(s['status'])} (this page reloads itself).</p>"
            "<p>A submission's name, build log and check report are shown here once it is finished; "
            "until then only its author sees them, on <a href=\"/me\">their own page</a>.</p>")
    return layout(f"Submission {s['id']}", body, refresh_s=3)


def submission_page(s: dict) -> str:
    """``/submission/ID``: status, verdict, build log (when ``s`` has one: the operator made
    build logs public), conformance report, sandbox."""
    pending = s["status"] in ("queued", "building", "checking")
    check_html = check_section(s.get("check_report"))
    sandbox = s.get("sandbox") or {}
    tiers = "".join(f"<li>{esc(step)}: tier {esc(rec.get('tier'))}; in force: {esc(', '.join(rec.get('protections', [])))}"
                    + "".join(f"; <span class=\"bad\">not available: {esc(u['protection'])} ({esc(u['reason'])})</span>"
                              for u in rec.get("unavailable", [])) + "</li>" for step, rec in sandbox.items())
    body = (f"<p>Bot {link_bot(s['name'])}, version {esc(s['version'])}, by {link_author(s['author'])}; "
            f"submitted {when(s['submitted'])}.</p>"
            f"<p>Status: {status_tag(s['status'], s.get('withdrawn'))}" + (" (this page reloads itself)" if pending else "") + "</p>"
            + (f"<p id=\"verdict\">Verdict: {esc(s['verdict'])}</p>" if s.get("verdict") else "")
            + (f"<h2>Build log</h2><pre id=\"build-log\">{esc(s.get('build_log') or '(not built yet)')}</pre>"
               if "build_log" in s else "<h2>Build log</h2><p class=\"muted\" id=\"build-log-private\">Shown to its "
               "author only, on their page (<a href=\"/me\">/me</a>), like their bots' stderr.</p>")
            + f"<h2>Conformance check</h2>{check_html or '<p class=muted>(not checked yet)</p>'}"
            + (f"<h2>Sandbox</h2><ul>{tiers}</ul>" if tiers else "")
            + f"<h2>Manifest</h2><pre>{esc(json.dumps(s['manifest'], indent=1))}</pre>")
    return layout(f"Submission {s['id']}: {s['entry']}", body, refresh_s=3 if pending else None)


def game_page(g: dict) -> str:
    """``/game/ID``: the seats and the replay viewer."""
    seats = "".join(f"<tr><td>{x['seat']}</td><td>{link_bot(x['bot'].split('@')[0], x['bot'])}</td>"
                    f"<td class=\"num\">{x['score']}</td><td class=\"num\">{x['rank']}</td>"
                    f"<td class=\"num\">{x['faults']}</td><td>{'yes' if x['forfeited'] else ''}</td></tr>"
                    for x in g["seats"])
    replay = (f'<iframe src="/game/{g["id"]}/replay" title="replay of game {g["id"]}"></iframe>'
              f'<p><a href="/game/{g["id"]}/replay">Open the replay on its own page</a> · '
              f'<a href="/game/{g["id"]}/replay.json" download>Download the replay (JSON)</a></p>'
              if g["replay"] else '<p class="muted">No replay is stored for this game.</p>')
    body = (f"<p>Group {g['group']}, rotation {g['rotation']}, seed {g['seed']}, {esc(g['rounds'])} rounds"
            + (", adjudicated" if g["adjudicated"] else "") + f"; played {when(g.get('played'))}.</p>"
            "<table><tr><th>seat</th><th>bot</th><th>score</th><th>rank</th><th>faults</th><th>forfeited</th></tr>"
            f"{seats}</table>{replay}")
    return layout(f"Game #{g['id']}", body)


_STEPS = (("games", "League games", "game"), ("builds", "Builds", "build"),
          ("checks", "Conformance checks", "check"))


def sandbox_section(in_force: dict) -> str:
    """What the sandbox really gave the newest games, builds and checks, read from their records."""
    items = []
    for key, label, one in _STEPS:
        rec = (in_force or {}).get(key)
        if not rec:
            why = " (no game has started a bot process)" if key == "games" else ""
            items.append(f'<li id="in-force-{key}"><b>{label}</b>: none recorded yet{why}.</li>')
            continue
        n = rec.get("records", 0)
        tiers = rec.get("tiers") or [rec.get("tier")]
        net = ('<span class="bad">reachable</span> (some of them ran without the no_network protection)'
               if rec.get("network") else "none")
        mem = "capped" if rec.get("memory_capped") else '<span class="bad">not capped</span>'
        missing = "".join(f"<li>{esc(u.get('protection'))}: {esc(u.get('reason'))}</li>"
                          for u in rec.get("unavailable") or [])
        fallback = "".join(f"<li>{esc(f)}</li>" for f in rec.get("fallback_reasons") or [])
        items.append(
            f'<li id="in-force-{key}"><b>{label}</b> (the newest {n} {one}{"" if n == 1 else "s"} recorded): '
            f"tier <b>{esc(rec.get('tier'))}</b>" + (f" (tiers seen: {esc(', '.join(map(str, tiers)))})"
                                                     if len(tiers) > 1 else "")
            + f"; network: {net}; memory: {mem}.<br><span class=\"muted\">In force in every one: "
            f"{esc(', '.join(rec.get('protections') or []) or 'nothing')}.</span>"
            + (f"<br>Not available on this machine:<ul>{missing}</ul>" if missing else "")
            + (f"Fell back from the tier asked for:<ul>{fallback}</ul>" if fallback else "") + "</li>")
    return ("<h2>Sandbox in force</h2><p>Read from the records of what really ran (the settings are not "
            "trusted here). Built-in bots play inside the server and start no process.</p>"
            f"<ul id=\"in-force\">{''.join(items)}</ul>")


def rules_page(r: dict) -> str:
    """``/rules``: the league's rules, time control, the sandbox in force and what a package must meet."""
    tc = ", ".join(f"{k} = {v}" for k, v in r["time_control"].items()) or "the defaults"
    params = ", ".join(f"{k} = {v}" for k, v in (r["rules"].get("params") or {}).items()) or "none"
    tools = ", ".join(f"{k} ({v})" for k, v in r["toolchains"].items()) or "none found"
    c = r["caps"]
    q = r.get("quotas") or {}
    quota = (f"<li>Each author: at most {q['submissions_per_hour']} submissions an hour and "
             f"{q['pending_per_author']} waiting or building at once.</li>"
             if q.get("submissions_per_hour") and q.get("pending_per_author") else "")
    pace = ("" if r.get("pace") is None else "<li>Background play: "
            + (f"about {r['pace']:g} games a minute" if r["pace"] else "as fast as the workers go")
            + ", new and uncertain entries first.</li>")
    body = (f"<ul><li>Rules: {esc(r['label'])} (variants: {esc(', '.join(r['rules'].get('variants') or []) or 'none')}; "
            f"parameters: {esc(params)})</li><li>Seats per game: {r['seats']}</li>"
            f"<li>Time control: {esc(tc)}</li>{pace}"
            f"<li>Toolchains on this server (those the build sandbox can run): {esc(tools)}</li>"
            f"<li>A package: at most {c['archive_kib']} KiB packed, {c['files']} files, {c['file_mib']} MiB per file, "
            f"{c['total_mib']} MiB unpacked; the build may take {r['build_timeout_s']:g} s, the check "
            f"{r['check_timeout_s']:g} s.</li>{quota}</ul>"
            + sandbox_section(r.get("in_force") or {}) +
            "<h2>Ratings and faults</h2>"
            "<p>Matchmaking pairs bots with few games and close ratings, seat-rotated; ratings are refitted on all "
            "games (Bradley-Terry at two seats, Plackett-Luce at three or four). A bot that breaks the protocol or "
            "its clock forfeits the game. The protocol and the package format: <code>docs/protocol.md</code>, "
            "<code>docs/writing-a-bot.md</code>.</p>"
            "<h2>Submitting</h2><p>Ask the league's operator for a token, then <code>arena submit PATH --server URL "
            "--token TOKEN</code>, or use the <a href=\"/submit\">upload form</a>, or "
            "<code>POST /api/submissions</code> with the archive as the body and <code>Authorization: Bearer TOKEN"
            "</code>. The <a href=\"/api\">API page</a> lists every endpoint.</p>")
    return layout("Rules", body)


def submit_page(error: str | None = None) -> str:
    """``/submit``: the upload form."""
    err = f'<p class="bad" id="error">{esc(error)}</p>' if error else ""
    body = (f"{err}<form method=\"post\" action=\"/submit\" enctype=\"multipart/form-data\">"
            "<p><label>Token <input type=\"password\" name=\"token\" size=\"50\" required></label></p>"
            "<p><label>Package (.zip or .tar.gz with bot.toml) <input type=\"file\" name=\"package\" "
            "accept=\".zip,.tar.gz,.tgz\" required></label></p>"
            "<p><label><input type=\"checkbox\" name=\"keep_previous\" value=\"1\"> keep my previous version "
            "playing</label></p><p><button type=\"submit\">Submit</button></p></form>")
    return layout("Submit a bot", body)


def error_page(title: str, message: str) -> str:
    """A page for 404 and friends."""
    return layout(title, f"<p>{esc(message)}</p>")
