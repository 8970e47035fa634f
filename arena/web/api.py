"""The JSON API's read-only endpoints: the table, bots, their games, authors, games, live games,
rules and submissions.

Each answers the data of the matching page (:mod:`.views`, :mod:`.history`) passed through
``public`` (:func:`.security.scrub`), or ``{"error": sentence}`` with 400 or 404. The
endpoints that take a token (submitting, withdrawing) live with the app.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from . import history, store, views
from .author import PRIVATE, bearer
from .security import parse_id

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


def read_routes(path: Path, settings, public: Callable, live_games: Callable[[], list],
                player_status: Callable[[], str], base: str = "") -> list[Route]:
    """The read-only JSON routes of the league file ``path``; links are built on the site's
    public URL ``base``, never on a request's ``Host``."""

    shown = SUBMISSION_KEYS if settings.public_build_logs else PUBLIC_KEYS  # to anyone but the author

    def answer(value, status: int = 200) -> JSONResponse:
        return JSONResponse(public(value), status_code=status)

    def api_submission(request: Request) -> Response:
        """A submission's status, verdict and check report (its status only until it is finished,
        its build log only to its author: Authorization: Bearer TOKEN)."""
        sid = parse_id(request.path_params["sid"])
        token = bearer(request)
        with views.opened(path) as league:
            s = store.submission(league, sid) if sid else None
            mine = bool(s and token and store.author_of(league, token) == s["author"])
        if s is None:
            return answer({"error": f"no submission #{request.path_params['sid']}"}, 404)
        if s["status"] in store.PENDING and not mine:  # the name of a submission in progress is its author's
            return JSONResponse({"id": s["id"], "status": s["status"], "url": f"{base}/submission/{s['id']}"})
        return JSONResponse(submission_json(base, s, public, SUBMISSION_KEYS if mine else shown),
                            headers=PRIVATE if mine else None)

    def api_leaderboard(request: Request) -> Response:
        """The league table: every entry's rating, interval, games, faults, form and status."""
        with views.opened(path) as league:
            return answer(views.leaderboard(league))

    def api_bot(request: Request) -> Response:
        """A bot: author, description, versions with their rows, rating history, recent games, faults."""
        name = request.path_params["name"]
        with views.opened(path) as league:
            data = views.bot(league, name)
            if data:
                data["head_to_head"] = history.head_to_head(league, name)
                data["submissions"] = [{k: s.get(k) for k in shown} for s in data["submissions"]]
        return answer(data) if data else answer({"error": f"no bot called {name!r}"}, 404)

    def api_bot_games(request: Request) -> Response:
        """A bot's match history, one page (?opponent=BOT&result=win|draw|loss&page=N&per_page=N)."""
        name = request.path_params["name"]
        try:
            with views.opened(path) as league:
                found = views.bot_exists(league, name)
                data = history.match_history(league, name, **history.parse_query(request.query_params)) \
                    if found else None
        except history.BadQuery as exc:
            return answer({"error": str(exc)}, 400)
        return answer(data) if data else answer({"error": f"no bot called {name!r}"}, 404)

    def api_author(request: Request) -> Response:
        """An author's bots and submissions."""
        name = request.path_params["name"]
        with views.opened(path) as league:
            data = history.author(league, name)
        if data:
            keep = ("id", "name", "version", "entry", "status", "verdict", "withdrawn", "submitted", "finished")
            data["submissions"] = [{k: s.get(k) for k in keep} for s in data["submissions"]]
        return answer(data) if data else answer({"error": f"no author called {name!r}"}, 404)

    def api_game(request: Request) -> Response:
        """A game: seats, scores, ranks, faults, and where its replay is."""
        gid = parse_id(request.path_params["gid"])
        with views.opened(path) as league:
            g = views.game(league, gid) if gid else None
        if g is None:
            return answer({"error": f"no game #{request.path_params['gid']}"}, 404)
        return answer(dict(g, url=f"{base}/game/{gid}",
                           replay_url=f"{base}/game/{gid}/replay.json" if g["replay"] else None))

    def api_live(request: Request) -> Response:
        """The games in flight now, and what the background player is doing."""
        return answer({"status": player_status(), "games": live_games()})

    def api_rules(request: Request) -> Response:
        """The league's rules, time control, sandbox in force and package limits."""
        with views.opened(path) as league:
            return answer(views.rules(league, settings))

    return [
        Route("/api/submissions/{sid:id}", api_submission), Route("/api/leaderboard", api_leaderboard),
        Route("/api/bots/{name}", api_bot), Route("/api/bots/{name}/games", api_bot_games),
        Route("/api/authors/{name}", api_author), Route("/api/games/live", api_live),
        Route("/api/games/{gid:id}", api_game), Route("/api/rules", api_rules),
    ]
