"""The site's public pages: the leaderboard, bots, authors, games and their replays, live
games, the rules, submissions, the documents for bot authors and the ``/api`` list.

Each endpoint reads the league file (:mod:`.views`, :mod:`.history`, :mod:`.store`) and
answers server-rendered HTML (:mod:`.pages`, :mod:`.site_pages`); every value passes
``site.public`` (no server path) and every id that names nothing answers 404.
"""

from __future__ import annotations

import re
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ..replay.html import SCRIPT_TEXT, STYLE_TEXT
from . import history, pages, site_pages, store, views
from .reading import ident, read_capped
from .security import page_policy
from .state import SiteState, site_of
from .withdrawal import withdraw_version

#: The replay viewer's policy: its own style and script (by hash), shown in the site's frames.
REPLAY_POLICY = page_policy(styles=(STYLE_TEXT,), scripts=(SCRIPT_TEXT,), framed=True)
#: The bot authors' documents ship with the package (arena/web/docs links to docs/).
DOCS_DIR = Path(__file__).resolve().parent / "docs"


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status)


def _not_found(what: str) -> HTMLResponse:
    return _html(pages.error_page("Not found", what), 404)


def home(request: Request) -> Response:
    """The leaderboard (``?sort=rating|games|faults|bot|author``), the newest games and submissions."""
    site = site_of(request)
    order = request.query_params.get("sort", "rating")
    if order not in pages.SORTS:
        return _html(pages.error_page("Bad request", f"sort must be one of {', '.join(pages.SORTS)}"), 400)
    with views.opened(site.path) as league:
        tab = pages.sort_rows(views.leaderboard(league), order)
        recent = views.recent_games(league, limit=10)
        subs = store.submissions(league, store.PUBLIC)[:10]
    return _html(pages.leaderboard_page(site.public(tab), recent, site.public(subs), site.play_status(),
                                        len(site.live_games())))


def _bot_data(site: SiteState, name: str) -> tuple[dict, list] | None:
    """What the page of bot ``name`` shows, as the public may see it (None if there is no such bot)."""
    with views.opened(site.path) as league:
        data = views.bot(league, name)
        h2h = history.head_to_head(league, name) if data else []
    return (site.public(data), site.public(h2h)) if data else None


def bot(request: Request) -> Response:
    """A bot: description, versions, rating over time, head-to-head, recent games, faults, submissions."""
    site, name = site_of(request), request.path_params["name"]
    shown = _bot_data(site, name)
    if shown is None:
        return _not_found(f"No bot called {name!r}.")
    playing = [g for g in site.live_games() if any(views.base_name(str(b)) == name for b in g.get("bots") or [])]
    return _html(site_pages.bot_page(*shown, playing=playing))


async def bot_withdraw(request: Request) -> Response:
    """Withdraw one of your versions from the bot's page (form: entry, token)."""
    site, name = site_of(request), request.path_params["name"]
    try:
        request._body = await read_capped(request, 8192)
        form = await request.form(max_files=0, max_fields=4)
        entry, token = str(form.get("entry") or ""), str(form.get("token") or "")
    except Exception:  # too large, or not a form
        entry = token = ""
    if not entry or not token:
        status, message = 400, "Choose a version and give your token."
    else:
        status, message = await run_in_threadpool(withdraw_version, site.path, name, token, entry)
    shown = _bot_data(site, name)
    if shown is None:
        return _not_found(f"No bot called {name!r}.")
    return _html(site_pages.bot_page(*shown, message=site.public(message), ok=status == 200), status)


def bot_games(request: Request) -> Response:
    """A bot's whole match history, newest first (?opponent=BOT&result=win|draw|loss&page=N)."""
    site, name = site_of(request), request.path_params["name"]
    try:
        with views.opened(site.path) as league:
            found = views.bot_exists(league, name)
            data = history.match_history(league, name, **history.parse_query(request.query_params)) if found else None
    except history.BadQuery as exc:
        return _html(pages.error_page("Bad request", str(exc)), 400)
    return _html(site_pages.history_page(site.public(data))) if data else _not_found(f"No bot called {name!r}.")


def author(request: Request) -> Response:
    """An author: their bots with each version's rating, and their submissions."""
    site, name = site_of(request), request.path_params["name"]
    with views.opened(site.path) as league:
        data = history.author(league, name)
    return _html(site_pages.author_page(site.public(data))) if data else _not_found(f"No author called {name!r}.")


def game(request: Request) -> Response:
    """A game: seats, scores, faults, and its replay."""
    site, gid = site_of(request), ident(request, "gid")
    with views.opened(site.path) as league:
        g = views.game(league, gid)
    return _html(pages.game_page(g)) if g else _not_found(f"No game #{gid}.")


def _record(site: SiteState, gid: int) -> dict | None:
    with views.opened(site.path) as league:
        g = views.game(league, gid)
        record = views.read_replay(league, g) if g else None
    return site.public(record) if isinstance(record, dict) else None


def replay(request: Request) -> Response:
    """The replay viewer of a game (a page with its own script)."""
    from ..replay.html import render_html

    site, gid = site_of(request), ident(request, "gid")
    record = _record(site, gid)
    if record is None:
        return _not_found(f"No replay of game #{gid}.")
    try:
        page = render_html(record)
    except Exception as exc:  # a replay that does not reproduce, or is not a replay at all
        return _html(pages.error_page("Replay unavailable", f"The replay of game #{gid} cannot be shown: "
                                      + str(site.public(str(exc)))[:300]), 404)
    return HTMLResponse(page, headers={"Content-Security-Policy": REPLAY_POLICY})


def replay_json(request: Request) -> Response:
    """A game's replay file, to download (``arena replay FILE`` plays it back)."""
    gid = ident(request, "gid")
    record = _record(site_of(request), gid)
    if record is None:
        return JSONResponse({"error": f"no replay of game #{gid}"}, status_code=404)
    return JSONResponse(record, headers={"Content-Disposition": f'attachment; filename="game-{gid}.json"'})


def live(request: Request) -> Response:
    """The games the background player has in flight now."""
    site = site_of(request)
    return _html(site_pages.live_page(site.live_games(), site.play_status()))


def rules(request: Request) -> Response:
    """The league's rules, time control, sandbox in force and what a package must meet."""
    site = site_of(request)
    with views.opened(site.path) as league:
        return _html(pages.rules_page(site.public(views.rules(league, site.settings))))


def submission(request: Request) -> Response:
    """A submission: its progress, check report and verdict (its status only until it is finished; its build log to its author)."""
    site, sid = site_of(request), ident(request, "sid")
    with views.opened(site.path) as league:
        s = store.submission(league, sid)
    if not s:
        return _not_found(f"No submission #{sid}.")
    if s["status"] in store.PENDING:  # its name is its author's until it is finished (their page: /me)
        return _html(pages.submission_in_progress_page({"id": s["id"], "status": s["status"]}))
    if not site.settings.public_build_logs:  # its author's, like their bots' stderr (their page: /me)
        s = {k: v for k, v in s.items() if k != "build_log"}
    return _html(pages.submission_page(site.public(s)))


def _doc_page(name: str) -> Response:
    found = site_pages.DOCS.get(name)
    try:
        text = (DOCS_DIR / found[0]).read_text(encoding="utf-8") if found else None
    except OSError:
        text = None
    if text is None:
        return _not_found(f"No document {name!r}; there are: {', '.join(site_pages.DOCS)}.")
    return _html(site_pages.doc_page(found[1], text))


def protocol_doc(request: Request) -> Response:
    """The bot protocol: the messages a bot reads and writes (docs/protocol.md)."""
    return _doc_page("protocol")


def writing_doc(request: Request) -> Response:
    """Writing a bot: the SDK, bot packages and submitting (docs/writing-a-bot.md)."""
    return _doc_page("writing-a-bot")


def endpoints(app) -> list[dict]:
    """Every route of ``app``: methods, path and the first line of its handler's docstring."""
    out = []
    for r in app.routes:
        if not isinstance(r, Route):
            continue
        doc = (r.endpoint.__doc__ or "").strip().splitlines()
        methods = sorted(m for m in (r.methods or {"GET"}) if m != "HEAD")
        out.append({"methods": methods, "path": re.sub(r":\w+}", "}", r.path),
                    "summary": doc[0].replace("``", "") if doc else ""})
    return out


def api_index(request: Request) -> Response:
    """This list of every page and API endpoint."""
    return _html(site_pages.api_page(endpoints(request.app)))


routes = [
    Route("/", home), Route("/bot/{name}", bot), Route("/bot/{name}/games", bot_games),
    Route("/bot/{name}/withdraw", bot_withdraw, methods=["POST"]),
    Route("/author/{name}", author), Route("/game/{gid:id}", game),
    Route("/game/{gid:id}/replay", replay), Route("/game/{gid:id}/replay.json", replay_json),
    Route("/live", live), Route("/rules", rules), Route("/submission/{sid:id}", submission),
    Route("/api", api_index), Route("/docs/protocol", protocol_doc), Route("/docs/writing-a-bot", writing_doc),
]
