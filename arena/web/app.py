"""The Starlette app of ``arena serve``: pages, the upload form, the JSON API, background work.

Routes (all pages are server-rendered HTML; the API speaks JSON):

- ``GET /`` the leaderboard; ``GET /bot/NAME``; ``GET /game/ID`` (``/game/ID/replay`` is
  the replay viewer of :mod:`arena.replay.html`); ``GET /rules``;
- ``GET /submit``, ``POST /submit`` the upload form (multipart: ``token``, ``package``,
  ``keep_previous``); ``GET /submission/ID`` its progress, build log and verdict;
- ``POST /api/submissions`` (body: the archive; ``Authorization: Bearer TOKEN``;
  ``?keep_previous=1``) answers ``202`` with the submission; ``GET /api/submissions/ID``;
  ``GET /api/leaderboard``.

A request body is read up to the package size cap and refused (413) beyond it, before
anything is parsed. While the app runs, :class:`.player.Player` plays league games and
:class:`.submissions.Pipeline` builds and checks submissions, each in a thread of its own.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ..errors import ArenaError
from . import pages, store, views
from .package import PackageError
from .player import Player
from .submissions import Pipeline, Settings, receive

FORM_OVERHEAD = 64 << 10


class TooLarge(Exception):
    """The request body is over the cap."""


@contextlib.contextmanager
def _league(path: Path):
    league = store.open_league(path)
    try:
        yield league
    finally:
        league.close()


async def _read_capped(request: Request, cap: int) -> bytes:
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > cap:
        raise TooLarge()
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise TooLarge()
    return bytes(body)


def create_app(league_path, settings: Settings = Settings(), play: bool = True, concurrency: int = 2,
               groups_per_round: int = 2) -> Starlette:
    """The app serving the league file ``league_path`` (which must exist)."""
    path = Path(league_path)
    with _league(path):  # fails early, with a sentence, if it is not a league
        pass
    pipeline = Pipeline(path, settings)
    player = Player(path, concurrency, groups_per_round) if play else None
    cap = settings.caps.archive_bytes

    def html(text: str, status: int = 200) -> HTMLResponse:
        return HTMLResponse(text, status_code=status)

    def not_found(what: str) -> HTMLResponse:
        return html(pages.error_page("Not found", what), 404)

    def home(request: Request) -> Response:
        with _league(path) as league:
            tab = views.leaderboard(league)
            recent = views.recent_games(league, limit=10)
            subs = store.submissions(league)[:10]
        return html(pages.leaderboard_page(tab, recent, subs, player.status if player else "off"))

    def bot(request: Request) -> Response:
        with _league(path) as league:
            data = views.bot(league, request.path_params["name"])
        return html(pages.bot_page(data)) if data else not_found(f"No bot called {request.path_params['name']!r}.")

    def game(request: Request) -> Response:
        with _league(path) as league:
            g = views.game(league, request.path_params["gid"])
        return html(pages.game_page(g)) if g else not_found(f"No game #{request.path_params['gid']}.")

    def replay(request: Request) -> Response:
        from ..replay.html import render_html
        with _league(path) as league:
            g = views.game(league, request.path_params["gid"])
            record = views.read_replay(league, g) if g else None
        if record is None:
            return not_found(f"No replay of game #{request.path_params['gid']}.")
        try:
            return html(render_html(record))
        except ArenaError as exc:
            return html(pages.error_page("Replay unavailable", str(exc)), 500)

    def rules(request: Request) -> Response:
        with _league(path) as league:
            return html(pages.rules_page(views.rules(league, settings)))

    def submission(request: Request) -> Response:
        with _league(path) as league:
            s = store.submission(league, request.path_params["sid"])
        return html(pages.submission_page(s)) if s else not_found(f"No submission #{request.path_params['sid']}.")

    def submit_form(request: Request) -> Response:
        return html(pages.submit_page())

    def accept(token: str | None, data: bytes, keep_previous: bool) -> tuple[int, dict]:
        with _league(path) as league:
            author = store.author_of(league, token)
            if author is None:
                return 401, {"error": "unknown token: ask the league's operator for one "
                                      "(`arena league token new AUTHOR`)"}
            try:
                sub = receive(league, author, data, keep_previous, settings)
            except PackageError as exc:
                return 400, {"error": str(exc)}
        pipeline.wake.set()
        return 202, sub

    async def submit_post(request: Request) -> Response:
        try:
            request._body = await _read_capped(request, cap + FORM_OVERHEAD)
            form = await request.form(max_files=1, max_fields=4)
        except TooLarge:
            return html(pages.submit_page(f"The upload is over the {cap >> 10} KiB limit."), 413)
        except Exception:  # a malformed multipart body
            return html(pages.submit_page("The form could not be read; choose a file and try again."), 400)
        upload = form.get("package")
        if upload is None or isinstance(upload, str):
            return html(pages.submit_page("Choose a package file."), 400)
        data = await upload.read()
        status, out = await run_in_threadpool(accept, str(form.get("token") or ""), data,
                                              form.get("keep_previous") == "1")
        if status != 202:
            return html(pages.submit_page(out["error"]), status)
        return RedirectResponse(f"/submission/{out['id']}", status_code=303)

    def _public(request: Request, sub: dict) -> dict:
        base = str(request.base_url).rstrip("/")
        keep = ("id", "author", "name", "version", "entry", "status", "verdict", "submitted", "finished", "check_report",
                "build_log", "sandbox")
        return dict({k: sub.get(k) for k in keep}, url=f"{base}/submission/{sub['id']}",
                    bot_url=f"{base}/bot/{sub['name']}")

    async def api_submit(request: Request) -> Response:
        auth = request.headers.get("authorization", "")
        token = auth[7:].strip() if auth.lower().startswith("bearer ") else None
        try:
            data = await _read_capped(request, cap)
        except TooLarge:
            return JSONResponse({"error": f"the archive is over the {cap >> 10} KiB limit"}, status_code=413)
        keep = request.query_params.get("keep_previous", "0") in ("1", "true", "yes")
        status, out = await run_in_threadpool(accept, token, data, keep)
        return JSONResponse(out if status != 202 else _public(request, out), status_code=status)

    def api_submission(request: Request) -> Response:
        with _league(path) as league:
            s = store.submission(league, request.path_params["sid"])
        if s is None:
            return JSONResponse({"error": f"no submission #{request.path_params['sid']}"}, status_code=404)
        return JSONResponse(_public(request, s))

    def api_leaderboard(request: Request) -> Response:
        with _league(path) as league:
            return JSONResponse(views.leaderboard(league))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        pipeline.start()
        if player is not None:
            player.start()
        try:
            yield
        finally:
            pipeline.stop()
            if player is not None:
                await run_in_threadpool(player.stop)

    routes = [
        Route("/", home), Route("/bot/{name}", bot), Route("/game/{gid:int}", game),
        Route("/game/{gid:int}/replay", replay), Route("/rules", rules),
        Route("/submit", submit_form, methods=["GET"]), Route("/submit", submit_post, methods=["POST"]),
        Route("/submission/{sid:int}", submission),
        Route("/api/submissions", api_submit, methods=["POST"]),
        Route("/api/submissions/{sid:int}", api_submission), Route("/api/leaderboard", api_leaderboard),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.player = player
    app.state.pipeline = pipeline
    return app
