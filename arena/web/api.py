"""The JSON API's read-only endpoints: the table, bots, their games, authors, games, live games,
rules and submissions.

Each answers the data of the matching page (:mod:`.views`, :mod:`.history`) passed through
``site.public`` (:func:`.security.scrub`), or ``{"error": sentence}`` with 400 or 404. The
endpoints that change something live with what they change (:mod:`.uploads`,
:mod:`.withdrawal`); an author's own page is :mod:`.author`.
"""

from __future__ import annotations

from typing import Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from . import history, store, views
from .author import PRIVATE
from .reading import bearer
from .security import parse_id
from .state import SiteState, site_of

#: The columns of a submission the API shows (never its folder or command line).
SUBMISSION_KEYS = ("id", "author", "name", "version", "entry", "status", "verdict", "withdrawn", "submitted",
                   "finished", "check_report", "build_log", "sandbox")
#: What anyone but its author sees of a submission, unless the operator made build logs public.
PUBLIC_KEYS = tuple(k for k in SUBMISSION_KEYS if k != "build_log")


def submission_json(base: str, sub: dict, public: Callable, keys: tuple = SUBMISSION_KEYS) -> dict:
    """A submission as the API shows it (its ``keys``), with the links (on the site's public
    URL ``base``) to its page and its bot's."""
    return dict(public({k: sub.get(k) for k in keys}), url=f"{base}/submission/{sub['id']}",
                bot_url=f"{base}/bot/{sub['name']}")


def _answer(site: SiteState, value, status: int = 200) -> JSONResponse:
    return JSONResponse(site.public(value), status_code=status)


def _shown(site: SiteState) -> tuple:
    """What anyone but its author sees of a submission."""
    return SUBMISSION_KEYS if site.settings.public_build_logs else PUBLIC_KEYS


def api_submission(request: Request) -> Response:
    """A submission's status, verdict and check report (its status only until it is finished,
    its build log only to its author: Authorization: Bearer TOKEN)."""
    site = site_of(request)
    base = site.base_url
    sid = parse_id(request.path_params["sid"])
    token = bearer(request)
    with views.opened(site.path) as league:
        s = store.submission(league, sid) if sid else None
        mine = bool(s and token and store.author_of(league, token) == s["author"])
    if s is None:
        return _answer(site, {"error": f"no submission #{request.path_params['sid']}"}, 404)
    if s["status"] in store.PENDING and not mine:  # the name of a submission in progress is its author's
        return JSONResponse({"id": s["id"], "status": s["status"], "url": f"{base}/submission/{s['id']}"})
    return JSONResponse(submission_json(base, s, site.public, SUBMISSION_KEYS if mine else _shown(site)),
                        headers=PRIVATE if mine else None)


def api_leaderboard(request: Request) -> Response:
    """The league table: every entry's rating, interval, games, faults, form and status."""
    site = site_of(request)
    with views.opened(site.path) as league:
        return _answer(site, views.leaderboard(league))


def api_bot(request: Request) -> Response:
    """A bot: author, description, versions with their rows, rating history, recent games, faults."""
    site, name = site_of(request), request.path_params["name"]
    shown = _shown(site)
    with views.opened(site.path) as league:
        data = views.bot(league, name)
        if data:
            data["head_to_head"] = history.head_to_head(league, name)
            data["submissions"] = [{k: s.get(k) for k in shown} for s in data["submissions"]]
    return _answer(site, data) if data else _answer(site, {"error": f"no bot called {name!r}"}, 404)


def api_bot_games(request: Request) -> Response:
    """A bot's match history, one page (?opponent=BOT&result=win|draw|loss&page=N&per_page=N)."""
    site, name = site_of(request), request.path_params["name"]
    try:
        with views.opened(site.path) as league:
            found = views.bot_exists(league, name)
            data = history.match_history(league, name, **history.parse_query(request.query_params)) \
                if found else None
    except history.BadQuery as exc:
        return _answer(site, {"error": str(exc)}, 400)
    return _answer(site, data) if data else _answer(site, {"error": f"no bot called {name!r}"}, 404)


def api_author(request: Request) -> Response:
    """An author's bots and submissions."""
    site, name = site_of(request), request.path_params["name"]
    with views.opened(site.path) as league:
        data = history.author(league, name)
    if data:
        keep = ("id", "name", "version", "entry", "status", "verdict", "withdrawn", "submitted", "finished")
        data["submissions"] = [{k: s.get(k) for k in keep} for s in data["submissions"]]
    return _answer(site, data) if data else _answer(site, {"error": f"no author called {name!r}"}, 404)


def api_game(request: Request) -> Response:
    """A game: seats, scores, ranks, faults, and where its replay is."""
    site = site_of(request)
    base = site.base_url
    gid = parse_id(request.path_params["gid"])
    with views.opened(site.path) as league:
        g = views.game(league, gid) if gid else None
    if g is None:
        return _answer(site, {"error": f"no game #{request.path_params['gid']}"}, 404)
    return _answer(site, dict(g, url=f"{base}/game/{gid}",
                              replay_url=f"{base}/game/{gid}/replay.json" if g["replay"] else None))


def api_live(request: Request) -> Response:
    """The games in flight now, and what the background player is doing."""
    site = site_of(request)
    return _answer(site, {"status": site.play_status(), "games": site.live_games()})


def api_rules(request: Request) -> Response:
    """The league's rules, time control, sandbox in force and package limits."""
    site = site_of(request)
    with views.opened(site.path) as league:
        return _answer(site, views.rules(league, site.settings))


routes = [
    Route("/api/submissions/{sid:id}", api_submission), Route("/api/leaderboard", api_leaderboard),
    Route("/api/bots/{name}", api_bot), Route("/api/bots/{name}/games", api_bot_games),
    Route("/api/authors/{name}", api_author), Route("/api/games/live", api_live),
    Route("/api/games/{gid:id}", api_game), Route("/api/rules", api_rules),
]
