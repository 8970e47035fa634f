"""The Starlette app of ``arena serve``: pages, the upload form, the JSON API, background work.

Every route is listed, with the first line of its handler's docstring, on the ``/api``
page, so the list is complete by construction. The pages' handlers are here, the JSON API's
read-only endpoints in :mod:`.api`. Pages are server-rendered HTML; the API
speaks JSON. Every response carries the security headers of :mod:`.security`; every value
shown to the public passes :func:`.security.scrub` (no server path), and every id or query
parameter that names nothing answers 4xx.

A request body is read up to the package size cap and refused (413) beyond it, before
anything is parsed. While the app runs, :class:`.player.Player` plays league games and
:class:`.submissions.Pipeline` builds and checks submissions, each in a thread of its own.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ..replay.html import SCRIPT_TEXT, STYLE_TEXT
from . import api as json_api
from . import author as private
from . import follow
from . import history, pages, site_pages, store, views
from .security import SecurityHeaders, page_policy, parse_id, scrub, scrub_sentence
from ..packages.package import PackageError
from .cache import ResponseCache
from .player import Player
from .ratings import RatingsKeeper
from .submissions import Pipeline, QuotaExceeded, Settings, check_quota, packages_dir, receive
from .withdrawal import withdraw_endpoint

FORM_OVERHEAD = 64 << 10
#: What the public sees of a game in flight in the list of live games.
LIVE_KEYS = ("group", "rotation", "bots", "started", "state")


class TooLarge(Exception):
    """The request body is over the cap."""


#: Upload bodies being received at once (each streamed to a file, never held in memory whole);
#: beyond, an upload is answered 503 before its body is read.
MAX_UPLOADS = 16
CHUNK = 64 << 10


async def _spool_capped(request: Request, cap: int, folder: Path):
    """The request body streamed into a new file in ``folder`` (at most ``cap`` bytes, else
    :class:`TooLarge`); the open file, at its start. Memory: one chunk at a time."""
    import tempfile

    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > cap:
        raise TooLarge()
    folder.mkdir(mode=0o700, exist_ok=True)
    out = tempfile.TemporaryFile(dir=folder)
    try:
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:
                raise TooLarge()
            out.write(chunk)
        out.seek(0)
        return out
    except BaseException:
        out.close()
        raise


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


def _file_receive(spooled):
    """An ASGI ``receive`` that gives the body back from ``spooled``, a chunk at a time."""
    async def receive():
        chunk = spooled.read(CHUNK)
        return {"type": "http.request", "body": chunk, "more_body": bool(chunk)}
    return receive


#: The replay viewer's policy: its own style and script (by hash), shown in the site's frames.
REPLAY_POLICY = page_policy(styles=(STYLE_TEXT,), scripts=(SCRIPT_TEXT,), framed=True)
#: Every page of the site: its one style sheet, no script at all.
PAGE_POLICY = page_policy(styles=(pages.CSS,))


def create_app(league_path, settings: Settings = Settings(), play: bool = True, concurrency: int = 2,
               groups_per_round: int = 2, dask: str | None = None, public_url: str = "http://127.0.0.1:8000",
               cache_ttl_s: float = 2.0, refit_interval_s: float = 5.0) -> Starlette:
    """The app serving the league file ``league_path`` (which must exist).

    ``public_url`` is where visitors reach the site (the links of API answers are built on
    it, never on a request's ``Host``); public pages are kept ``cache_ttl_s`` seconds
    (:class:`.cache.ResponseCache`); the ratings are refitted at most every
    ``refit_interval_s`` seconds while games are stored (:class:`.ratings.RatingsKeeper`)."""
    path = Path(league_path)
    with views.opened(path):  # fails early, with a sentence, if it is not a league
        pass
    base_url = public_url.rstrip("/")
    pipeline = Pipeline(path, settings)
    player = Player(path, concurrency, groups_per_round, settings=settings, dask=dask) if play else None
    keeper = RatingsKeeper(path, min_interval_s=refit_interval_s)
    cap = settings.caps.archive_bytes
    # folder names next to the league file that would otherwise show as relative paths
    hidden = tuple(f"{path.name}.{kind}/" for kind in ("bots", "replays", "logs", "live"))

    def public(value):
        return scrub(value, hidden)

    def html(text: str, status: int = 200) -> HTMLResponse:
        return HTMLResponse(text, status_code=status)

    def not_found(what: str) -> HTMLResponse:
        return html(pages.error_page("Not found", what), 404)

    def play_status() -> str:
        return public(player.status) if player is not None else "off"

    def live_games() -> list[dict]:
        """The games in flight as the public may see them: never their seed (it tells the decks' order)."""
        live = getattr(player, "live", None)
        return [public({k: g[k] for k in LIVE_KEYS if k in g}) for g in live()] if callable(live) else []

    def ident(request: Request, key: str) -> int:
        value = parse_id(request.path_params[key])
        if value is None:
            raise HTTPException(404, f"There is no #{str(request.path_params[key])[:40]}.")
        return value

    def home(request: Request) -> Response:
        """The leaderboard (``?sort=rating|games|faults|bot|author``), the newest games and submissions."""
        order = request.query_params.get("sort", "rating")
        if order not in pages.SORTS:
            return html(pages.error_page("Bad request", f"sort must be one of {', '.join(pages.SORTS)}"), 400)
        with views.opened(path) as league:
            tab = pages.sort_rows(views.leaderboard(league), order)
            recent = views.recent_games(league, limit=10)
            subs = store.submissions(league, store.PUBLIC)[:10]
        return html(pages.leaderboard_page(public(tab), recent, public(subs), play_status(),
                                           len(live_games())))

    def bot(request: Request) -> Response:
        """A bot: description, versions, rating over time, head-to-head, recent games, faults, submissions."""
        name = request.path_params["name"]
        with views.opened(path) as league:
            data = views.bot(league, name)
            h2h = history.head_to_head(league, name) if data else []
        if not data:
            return not_found(f"No bot called {name!r}.")
        playing = [g for g in live_games() if any(views.base_name(str(b)) == name for b in g.get("bots") or [])]
        return html(site_pages.bot_page(public(data), public(h2h), playing=playing))

    def withdraw_work(name: str, token: str, entry: str) -> tuple[int, str]:
        with views.opened(path) as league:
            author = store.author_of(league, token)
            if author is None:
                return 401, "Unknown token: only the bot's author, with their token, may withdraw a version."
            if views.base_name(entry) != name:
                return 404, f"{entry!r} is not a version of {name}."
            try:
                store.withdraw(league, author, entry)
            except store.WithdrawError as exc:
                return exc.status, f"Not withdrawn: {exc}."
        return 200, f"{entry} is withdrawn: it plays no more games; its games and rating stay in the records."

    async def bot_withdraw(request: Request) -> Response:
        """Withdraw one of your versions from the bot's page (form: entry, token)."""
        name = request.path_params["name"]
        try:
            request._body = await _read_capped(request, 8192)
            form = await request.form(max_files=0, max_fields=4)
            entry, token = str(form.get("entry") or ""), str(form.get("token") or "")
        except Exception:  # too large, or not a form
            entry = token = ""
        if not entry or not token:
            status, message = 400, "Choose a version and give your token."
        else:
            status, message = await run_in_threadpool(withdraw_work, name, token, entry)
        with views.opened(path) as league:
            data = views.bot(league, name)
            h2h = history.head_to_head(league, name) if data else []
        if not data:
            return not_found(f"No bot called {name!r}.")
        return html(site_pages.bot_page(public(data), public(h2h), message=public(message), ok=status == 200), status)

    def bot_games(request: Request) -> Response:
        """A bot's whole match history, newest first (?opponent=BOT&result=win|draw|loss&page=N)."""
        name = request.path_params["name"]
        try:
            with views.opened(path) as league:
                found = views.bot_exists(league, name)
                data = history.match_history(league, name, **history.parse_query(request.query_params)) if found else None
        except history.BadQuery as exc:
            return html(pages.error_page("Bad request", str(exc)), 400)
        return html(site_pages.history_page(public(data))) if data else not_found(f"No bot called {name!r}.")

    def author(request: Request) -> Response:
        """An author: their bots with each version's rating, and their submissions."""
        name = request.path_params["name"]
        with views.opened(path) as league:
            data = history.author(league, name)
        return html(site_pages.author_page(public(data))) if data else not_found(f"No author called {name!r}.")

    def game(request: Request) -> Response:
        """A game: seats, scores, faults, and its replay."""
        gid = ident(request, "gid")
        with views.opened(path) as league:
            g = views.game(league, gid)
        return html(pages.game_page(g)) if g else not_found(f"No game #{gid}.")

    def _record(gid: int) -> dict | None:
        with views.opened(path) as league:
            g = views.game(league, gid)
            record = views.read_replay(league, g) if g else None
        return public(record) if isinstance(record, dict) else None

    def replay(request: Request) -> Response:
        """The replay viewer of a game (a page with its own script)."""
        from ..replay.html import render_html
        gid = ident(request, "gid")
        record = _record(gid)
        if record is None:
            return not_found(f"No replay of game #{gid}.")
        try:
            page = render_html(record)
        except Exception as exc:  # a replay that does not reproduce, or is not a replay at all
            return html(pages.error_page("Replay unavailable", f"The replay of game #{gid} cannot be shown: "
                                         + str(public(str(exc)))[:300]), 404)
        return HTMLResponse(page, headers={"Content-Security-Policy": REPLAY_POLICY})

    def replay_json(request: Request) -> Response:
        """A game's replay file, to download (``arena replay FILE`` plays it back)."""
        gid = ident(request, "gid")
        record = _record(gid)
        if record is None:
            return JSONResponse({"error": f"no replay of game #{gid}"}, status_code=404)
        return JSONResponse(record, headers={"Content-Disposition": f'attachment; filename="game-{gid}.json"'})

    def live(request: Request) -> Response:
        """The games the background player has in flight now."""
        return html(site_pages.live_page(live_games(), play_status()))

    def rules(request: Request) -> Response:
        """The league's rules, time control, sandbox in force and what a package must meet."""
        with views.opened(path) as league:
            return html(pages.rules_page(public(views.rules(league, settings))))

    def submission(request: Request) -> Response:
        """A submission: its progress, check report and verdict (its status only until it is finished; its build log to its author)."""
        sid = ident(request, "sid")
        with views.opened(path) as league:
            s = store.submission(league, sid)
        if not s:
            return not_found(f"No submission #{sid}.")
        if s["status"] in store.PENDING:  # its name is its author's until it is finished (their page: /me)
            return html(pages.submission_in_progress_page({"id": s["id"], "status": s["status"]}))
        if not settings.public_build_logs:  # its author's, like their bots' stderr (their page: /me)
            s = {k: v for k, v in s.items() if k != "build_log"}
        return html(pages.submission_page(public(s)))

    def submit_form(request: Request) -> Response:
        """The upload form."""
        return html(pages.submit_page())

    def admit(token: str | None) -> tuple[int, dict | str]:
        """Who may upload, asked before the body is read: ``(200, author)`` or a refusal."""
        with views.opened(path) as league:
            author = store.author_of(league, token)
            if author is None:
                return 401, {"error": "unknown token: ask the league's operator for one "
                                      "(`arena league token new AUTHOR`)"}
            try:
                check_quota(league, author, settings)
            except QuotaExceeded as exc:
                return 429, {"error": str(exc), "retry_after": exc.retry_after}
        return 200, author

    def accept(token: str | None, data, keep_previous: bool) -> tuple[int, dict]:
        if not isinstance(data, bytes):  # a spooled upload: read only now, one at a time
            data = data.read()
        with views.opened(path) as league:
            author = store.author_of(league, token)
            if author is None:
                return 401, {"error": "unknown token: ask the league's operator for one "
                                      "(`arena league token new AUTHOR`)"}
            try:
                sub = receive(league, author, data, keep_previous, settings)
            except QuotaExceeded as exc:
                return 429, {"error": str(exc), "retry_after": exc.retry_after}
            except PackageError as exc:  # the author's own names are quoted in it: kept as written
                return 400, {"error": scrub_sentence(str(exc), hidden)}
        pipeline.wake.set()
        return 202, sub

    uploads = {"now": 0}
    uploads_dir = packages_dir(path) / ".uploads"

    async def submit_post(request: Request) -> Response:
        """Upload a package from the form (multipart: token, package, keep_previous)."""
        if uploads["now"] >= MAX_UPLOADS:
            return HTMLResponse(pages.submit_page("The server is receiving many uploads; try again in a minute."),
                                status_code=503, headers={"Retry-After": "60"})
        uploads["now"] += 1
        spooled = None
        try:
            try:
                spooled = await _spool_capped(request, cap + FORM_OVERHEAD, uploads_dir)
                form = await Request(request.scope, _file_receive(spooled)).form(max_files=1, max_fields=4)
            except TooLarge:
                return html(pages.submit_page(f"The upload is over the {cap >> 10} KiB limit."), 413)
            except Exception:  # a malformed multipart body
                return html(pages.submit_page("The form could not be read; choose a file and try again."), 400)
            upload = form.get("package")
            if upload is None or isinstance(upload, str):
                return html(pages.submit_page("Choose a package file."), 400)
            status, out = await run_in_threadpool(accept, str(form.get("token") or ""), upload.file,
                                                  form.get("keep_previous") == "1")
        finally:
            uploads["now"] -= 1
            if spooled is not None:
                spooled.close()
        if status != 202:
            return HTMLResponse(pages.submit_page(out["error"]), status_code=status,
                                headers=_retry(out) if status == 429 else None)
        return RedirectResponse(f"/submission/{out['id']}", status_code=303)

    def _retry(out: dict) -> dict:
        return {"Retry-After": str(max(1, int(out.get("retry_after") or 60)))}

    async def api_submit(request: Request) -> Response:
        """Submit a package: the archive as the body, ``Authorization: Bearer TOKEN``, ``?keep_previous=1``."""
        auth = request.headers.get("authorization", "")
        token = auth[7:].strip() if auth.lower().startswith("bearer ") else None
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > cap:
            return JSONResponse({"error": f"the archive is over the {cap >> 10} KiB limit"}, status_code=413)
        # who and how many, before a byte of the body is read (``Expect: 100-continue`` is
        # answered with this refusal, and the body is never sent)
        status, who = await run_in_threadpool(admit, token)
        if status != 200:
            return JSONResponse(who, status_code=status, headers=_retry(who) if status == 429 else None)
        if uploads["now"] >= MAX_UPLOADS:
            return JSONResponse({"error": "the server is receiving many uploads; try again in a minute"},
                                status_code=503, headers={"Retry-After": "60"})
        uploads["now"] += 1
        spooled = None
        try:
            try:
                spooled = await _spool_capped(request, cap, uploads_dir)
            except TooLarge:
                return JSONResponse({"error": f"the archive is over the {cap >> 10} KiB limit"}, status_code=413)
            keep = request.query_params.get("keep_previous", "0") in ("1", "true", "yes")
            status, out = await run_in_threadpool(accept, token, spooled, keep)
        finally:
            uploads["now"] -= 1
            if spooled is not None:
                spooled.close()
        return JSONResponse(out if status != 202 else json_api.submission_json(base_url, out, public), status_code=status,
                            headers=_retry(out) if status == 429 else None)

    # the bot authors' documents ship with the package (arena/web/docs links to docs/)
    docs_dir = Path(__file__).resolve().parent / "docs"

    def doc_page(name: str) -> Response:
        found = site_pages.DOCS.get(name)
        try:
            text = (docs_dir / found[0]).read_text(encoding="utf-8") if found else None
        except OSError:
            text = None
        if text is None:
            return not_found(f"No document {name!r}; there are: {', '.join(site_pages.DOCS)}.")
        return html(site_pages.doc_page(found[1], text))

    def protocol_doc(request: Request) -> Response:
        """The bot protocol: the messages a bot reads and writes (docs/protocol.md)."""
        return doc_page("protocol")

    def writing_doc(request: Request) -> Response:
        """Writing a bot: the SDK, bot packages and submitting (docs/writing-a-bot.md)."""
        return doc_page("writing-a-bot")

    def api_index(request: Request) -> Response:
        """This list of every page and API endpoint."""
        return html(site_pages.api_page(endpoints(app)))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        keeper.start()
        pipeline.start()
        if player is not None:
            player.start()
        try:
            yield
        finally:
            pipeline.stop()
            keeper.stop(wait_s=0)
            if player is not None:
                await run_in_threadpool(player.stop, 8.0)

    def stop_now() -> None:
        """Stop what the server does in the background at once (a signal arrived): games
        in flight are dropped, never half-stored."""
        if player is not None:
            player.stopping.set()
        pipeline.stop()
        keeper.stopping.set()

    async def http_error(request: Request, exc: HTTPException) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)
        title = {404: "Not found", 405: "Method not allowed"}.get(exc.status_code, "Bad request")
        return html(pages.error_page(title, str(exc.detail)), exc.status_code)

    routes = [
        Route("/", home), Route("/bot/{name}", bot), Route("/bot/{name}/games", bot_games),
        Route("/bot/{name}/withdraw", bot_withdraw, methods=["POST"]),
        Route("/author/{name}", author), Route("/game/{gid:id}", game),
        Route("/game/{gid:id}/replay", replay), Route("/game/{gid:id}/replay.json", replay_json),
        Route("/live", live), Route("/rules", rules),
        Route("/submit", submit_form, methods=["GET"]), Route("/submit", submit_post, methods=["POST"]),
        Route("/submission/{sid:id}", submission), Route("/api", api_index),
        Route("/docs/protocol", protocol_doc), Route("/docs/writing-a-bot", writing_doc),
        Route("/api/submissions", api_submit, methods=["POST"]),
        *private.routes(path, settings, public),
        *follow.routes(path, public, live_games, base_url, delay=settings.live_delay),
        *json_api.read_routes(path, settings, public, live_games, play_status, base_url),
        Route("/api/withdraw", withdraw_endpoint(path, public), methods=["POST"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={HTTPException: http_error},
                    middleware=[Middleware(SecurityHeaders, default_policy=PAGE_POLICY),
                                Middleware(ResponseCache, ttl_s=cache_ttl_s)])
    app.state.player = player
    app.state.pipeline = pipeline
    app.state.keeper = keeper
    app.state.stop_now = stop_now
    return app


def endpoints(app: Starlette) -> list[dict]:
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
