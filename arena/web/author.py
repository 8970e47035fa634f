"""An author's private page: their bots, every submission, their bots' stderr and their quota.

Authenticated by the author's token exactly as submitting is: ``Authorization: Bearer
TOKEN`` (``GET /api/me``), or the token typed into a form sent by ``POST`` (``/me``), never
in a URL, so no access log holds it. An unknown token is answered 401 before anything
else is read. Nothing another author owns is shown: the submissions are the author's own,
the logs are those of seats the league file says their entries played. Every answer says
``Cache-Control: no-store``, so the public response cache (:mod:`.cache`) never keeps it,
and every value passes ``public`` (:func:`.security.scrub`): no server path.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from . import store, views
from .pages import check_section, elo_cells, esc, layout, link_bot, status_tag, when
from .player import logs_dir
from .reading import bearer, form_token
from .state import SiteState, site_of

#: Games whose stderr each of an author's entries shows, and the bytes kept of each log (its end).
LOG_GAMES = 5
LOG_TAIL = 8 << 10
PRIVATE = {"Cache-Control": "no-store"}
#: The columns of a submission its author sees (never its folder or command line).
KEYS = ("id", "name", "version", "entry", "status", "verdict", "withdrawn", "submitted", "finished",
        "build_log", "check_report", "sandbox")


def log_name(group: int, rotation: int, seat: int, entry: str) -> str:
    """The file the referee keeps a seat's stderr of one game in (``arena.referee._log_names``)."""
    return f"{group}-{rotation}-seat{seat}-{re.sub(r'[^A-Za-z0-9_.-]', '_', entry)}.stderr.log"


def _tail(path: Path) -> tuple[str, bool] | None:
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - LOG_TAIL))
            data = f.read(LOG_TAIL)
    except OSError:
        return None
    return data.decode("utf-8", "replace"), size > LOG_TAIL


def stderr_logs(league, entry: str, games: int = LOG_GAMES) -> list[dict]:
    """The stderr of ``entry`` in its newest ``games`` games, newest first (the end of each log)."""
    out = []
    folder = logs_dir(league.path)
    for gid, grp, rot, seat, played in league.conn.execute(
            "SELECT g.id, g.grp, g.rotation, s.seat, g.played FROM seats s JOIN games g ON g.id = s.game_id "
            "WHERE s.entry = ? ORDER BY g.id DESC LIMIT ?", (entry, games)):
        found = _tail(folder / log_name(grp, rot, seat, entry))
        out.append({"game": gid, "seat": seat, "played": played, "kept": found is not None,
                    "text": found[0] if found else None, "truncated": bool(found and found[1])})
    return out


def quota(league, author: str, settings) -> dict:
    """What the submission quota (:func:`.submissions.check_quota`) counts for ``author`` now."""
    now = time.time()
    pending = store.pending_of(league, author)
    recent = store.submitted_since(league, author, now - 3600)
    per_hour, at_once = settings.submissions_per_hour, settings.pending_per_author
    full = bool(per_hour) and len(recent) >= per_hour
    return {"pending": pending, "pending_limit": at_once or None,
            "pending_left": max(0, at_once - pending) if at_once else None,
            "last_hour": len(recent), "hourly_limit": per_hour or None,
            "hourly_left": max(0, per_hour - len(recent)) if per_hour else None,
            "next_free": recent[-per_hour] + 3600 if full else None}


def private_view(league, author: str, settings) -> dict:
    """Everything ``author``'s private page shows."""
    subs = store.submissions(league, "author = ?", (author,))
    table = {r["name"]: r for r in views.leaderboard(league)["table"]}
    bots = []
    for s in reversed(subs):  # oldest first
        if s["status"] == "accepted":
            row = table.get(s["entry"]) or {}
            bots.append({"entry": s["entry"], "name": s["name"], "withdrawn": bool(s.get("withdrawn")),
                         "status": "withdrawn" if s.get("withdrawn") else row.get("status", "active"),
                         "elo": row.get("elo"), "elo_ci": row.get("elo_ci"), "games": row.get("games", 0),
                         "faults": row.get("faults", 0), "logs": stderr_logs(league, s["entry"])})
    return {"author": author, "bots": list(reversed(bots)), "submissions": [{k: s.get(k) for k in KEYS} for s in subs],
            "quota": quota(league, author, settings)}


def _quota_html(q: dict) -> str:
    items = []
    if q["pending_limit"]:
        items.append(f"<li>Waiting or being built: {q['pending']} of {q['pending_limit']} "
                     f"({q['pending_left']} left)</li>")
    if q["hourly_limit"]:
        items.append(f"<li>Submitted in the last hour: {q['last_hour']} of {q['hourly_limit']} "
                     f"({q['hourly_left']} left" + (f"; the next one from {when(q['next_free'])}" if q["next_free"] else "")
                     + ")</li>")
    return f"<ul id=\"quota\">{''.join(items)}</ul>" if items else '<p class="muted">No quota in this league.</p>'


def private_page(d: dict) -> str:
    """``POST /me``: the author's bots with their recent stderr, every submission with its logs, the quota."""
    rows, logs = [], []
    for b in d["bots"]:
        elo, ci = elo_cells(b)
        rows.append(f"<tr><td>{link_bot(b['name'], b['entry'])}</td><td>{esc(b['status'])}</td><td class=\"num\">{elo}</td>"
                    f"<td class=\"num\">{ci}</td><td class=\"num\">{b['games']}</td><td class=\"num\">{b['faults']}</td></tr>")
        games = "".join(
            f"<h4><a href=\"/game/{g['game']}\">game #{g['game']}</a>, seat {g['seat']} "
            f"<span class=\"muted\">{when(g['played'])}</span></h4>"
            + (f"<pre class=\"stderr\">{'[... its beginning is cut]' + chr(10) if g['truncated'] else ''}"
               f"{esc(g['text']) or '(nothing written)'}</pre>" if g["kept"] else
               '<p class="muted">Nothing kept: the bot wrote nothing on stderr in this game (a log is made at '
               'its first byte), or the log was pruned (only the newest games of each bot keep theirs).</p>')
            for g in b["logs"])
        logs.append(f"<h3>{esc(b['entry'])}</h3>" + (games or '<p class="muted">No games yet.</p>'))
    bots = ("<table id=\"my-bots\"><tr><th>version</th><th>status</th><th>rating</th><th>95% interval</th>"
            "<th>games</th><th>faults</th></tr>" + "".join(rows) + "</table>") if rows else \
        '<p class="muted">None of your bots is in the ladder yet.</p>'
    subs = []
    for s in d["submissions"]:
        subs.append(f"<details id=\"submission-{s['id']}\"{' open' if s['status'] in store.PENDING else ''}>"
                    f"<summary>#{s['id']} {esc(s['entry'])}: {status_tag(s['status'], s.get('withdrawn'))}"
                    f" <span class=\"muted\">{when(s['submitted'])}</span></summary>"
                    + (f"<p>Verdict: {esc(s['verdict'])}</p>" if s.get("verdict") else "")
                    + f"<h4>Build log</h4><pre>{esc(s.get('build_log') or '(not built yet)')}</pre>"
                    + f"<h4>Conformance check</h4>{check_section(s.get('check_report')) or '<p class=muted>(not checked yet)</p>'}"
                    + "</details>")
    body = (f"<p>Signed in with your token for this page only: nothing is remembered, and reloading asks for it again."
            f"</p><h2>Quota</h2>{_quota_html(d['quota'])}<h2>Your bots</h2>{bots}"
            f"<h2>Submissions</h2>" + ("".join(subs) or '<p class="muted">No submissions yet.</p>')
            + "<h2>Your bots' stderr in their recent games</h2>"
            + ("".join(logs) or '<p class="muted">No bot of yours has played yet.</p>'))
    return layout(f"Your bots, {d['author']}", body)


def sign_in_page(error: str | None = None) -> str:
    """``GET /me``: the form asking for the token."""
    err = f'<p class="bad" id="error">{esc(error)}</p>' if error else ""
    return layout("Your bots", f"{err}<p>Your bots, submissions with their build logs and check reports, your bots' "
                  "stderr in their recent games and your quota. Give the token the league's operator made for you "
                  "(it is sent in the request's body, never in its address).</p>"
                  "<form id=\"sign-in\" method=\"post\" action=\"/me\"><p><label>Token <input type=\"password\" "
                  "name=\"token\" size=\"50\" required autocomplete=\"current-password\"></label> "
                  "<button type=\"submit\">Show</button></p></form>")


def _private_data(site: SiteState, token: str | None) -> tuple[int, dict | None]:
    """``(200, what the author of token sees)``, or ``(401, None)`` for an unknown token."""
    with views.opened(site.path) as league:
        author = store.author_of(league, token)
        if author is None:
            return 401, None
        return 200, site.public(private_view(league, author, site.settings))


def me_form(request: Request) -> Response:
    """Your bots: the form asking for your token (the page itself is answered to a POST)."""
    return HTMLResponse(sign_in_page(), headers=PRIVATE)


async def me(request: Request) -> Response:
    """Your bots, submissions, build logs, check reports, your bots' recent stderr and your quota (form: token)."""
    token = await form_token(request)
    status, data = await run_in_threadpool(_private_data, site_of(request), token)
    if data is None:
        return HTMLResponse(sign_in_page("Unknown token: give the token the league's operator made for you."),
                            status_code=401, headers=PRIVATE)
    return HTMLResponse(private_page(data), headers=PRIVATE)


async def api_me(request: Request) -> Response:
    """Your bots, submissions (with logs), recent stderr and quota: Authorization: Bearer TOKEN."""
    status, data = await run_in_threadpool(_private_data, site_of(request), bearer(request))
    if data is None:
        return JSONResponse({"error": "unknown token: send Authorization: Bearer TOKEN with the token the "
                                      "league's operator made for you"}, status_code=401, headers=PRIVATE)
    return JSONResponse(data, headers=PRIVATE)


routes = [Route("/me", me_form, methods=["GET"]), Route("/me", me, methods=["POST"]), Route("/api/me", api_me)]
