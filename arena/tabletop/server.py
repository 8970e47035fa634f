"""The local web page of a person's seat and its small JSON API (Starlette, loopback only).

Every answer is the person's seat's view and nothing else: ``GET /api/state`` gives
``{"observation", "legal", "over", "result"}`` (plus ``events``, what the seat was told of
the others' moves, ``turn``, ``seat``, ``names``), the observation being the one a bot of
that seat gets; ``POST /api/action`` takes one item of ``legal`` and answers 400 with a
sentence otherwise. ``GET /api/cards`` is the card set's shapes and puzzles (what every bot
is given in ``hello``). Each call carries the table's token (``?token=`` or the
``X-Arena-Token`` header), so another user of the machine cannot play the seat. Once the
game is over, ``GET /replay`` is its replay in the HTML viewer.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import secrets
import socket
import threading
from importlib import resources
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .seat import ActionRefused, PersonSeat

#: The page's policy: its script and style are files of this server, it talks to no one else.
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
          "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": POLICY, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "Cache-Control": "no-store"}


def asset(name: str) -> str:
    """The text of one of the page's files (package data: ``arena/tabletop/assets``)."""
    return resources.files("arena.tabletop").joinpath("assets", name).read_text(encoding="utf-8")


class Table:
    """What the server serves: the person's seat, the game's public facts, the replay."""

    def __init__(self, person: PersonSeat, seat: int, names: list[str], cards: dict, token: str | None = None):
        self.person, self.seat, self.names, self.cards = person, seat, names, cards
        self.token = token or secrets.token_urlsafe(18)
        self.left = threading.Event()  # the person pressed Leave after the game


def table_of(request: Request) -> Table:
    """The table a request is for: the one a route put on the request (a league serves many),
    else the app's own."""
    return getattr(request.state, "table", None) or request.app.state.table


def _allowed(request: Request) -> bool:
    table = table_of(request)
    given = request.query_params.get("token") or request.headers.get("x-arena-token") or ""
    return hmac.compare_digest(given.encode(), table.token.encode())


def _refuse() -> JSONResponse:
    return JSONResponse({"error": "this table needs its token: open the address `arena play` printed"},
                        status_code=403, headers=HEADERS)


async def page(request: Request) -> Response:
    if not _allowed(request):
        return HTMLResponse("<!doctype html><title>Project L</title><p>This table needs its token: open the address "
                            "<code>arena play</code> printed.</p>", status_code=403, headers=HEADERS)
    return HTMLResponse(asset("page.html"), headers=HEADERS)


async def script(request: Request) -> Response:
    return Response(asset("page.js"), media_type="text/javascript", headers=HEADERS)


async def style(request: Request) -> Response:
    return Response(asset("page.css"), media_type="text/css", headers=HEADERS)


def _state(table: Table) -> dict:
    view = table.person.view()
    view.update(seat=table.seat, names=table.names,
                replay=("replay?token=" + table.token) if view["over"] and table.person.replay_path else None)
    return view


async def state(request: Request) -> Response:
    if not _allowed(request):
        return _refuse()
    table = table_of(request)
    try:  # ?turn=N&events=M: wait (up to 20 s) until the view differs, so a page need not poll fast
        turn, events = int(request.query_params["turn"]), int(request.query_params["events"])
    except (KeyError, ValueError):
        turn = events = None
    if turn is not None:
        await asyncio.get_running_loop().run_in_executor(None, table.person.wait_change, turn, events, 20.0)
    return JSONResponse(_state(table), headers=HEADERS)


async def cards(request: Request) -> Response:
    if not _allowed(request):
        return _refuse()
    return JSONResponse(table_of(request).cards, headers=HEADERS)


async def action(request: Request) -> Response:
    if not _allowed(request):
        return _refuse()
    table = table_of(request)
    try:
        body = json.loads(await request.body() or b"null")
    except ValueError:
        return JSONResponse({"error": "the body is not JSON: send one item of the 'legal' list of GET /api/state"},
                            status_code=400, headers=HEADERS)
    try:
        table.person.submit(body)
    except ActionRefused as exc:
        return JSONResponse({"error": str(exc)}, status_code=400, headers=HEADERS)
    return JSONResponse({"ok": True}, headers=HEADERS)


async def leave(request: Request) -> Response:
    if not _allowed(request):
        return _refuse()
    table = table_of(request)
    if not table.person.view()["over"]:
        return JSONResponse({"error": "the game is not over: play it to the end first"}, status_code=400,
                            headers=HEADERS)
    table.left.set()
    return JSONResponse({"ok": True}, headers=HEADERS)


async def replay(request: Request) -> Response:
    if not _allowed(request):
        return _refuse()
    table = table_of(request)
    if not table.person.view()["over"] or not table.person.replay_path:
        return HTMLResponse("<!doctype html><title>Project L</title><p>The replay is shown once the game is over.</p>",
                            status_code=404, headers=HEADERS)
    from ..replay.html import PAGE_POLICY, render_html

    record = json.loads(Path(table.person.replay_path).read_text(encoding="utf-8"))
    return HTMLResponse(render_html(record), headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
                                                      "Content-Security-Policy": PAGE_POLICY})


def make_app(table: Table) -> Starlette:
    """The table's Starlette app."""
    app = Starlette(routes=[
        Route("/", page), Route("/page.js", script), Route("/page.css", style),
        Route("/api/state", state), Route("/api/cards", cards), Route("/api/action", action, methods=["POST"]),
        Route("/api/leave", leave, methods=["POST"]), Route("/replay", replay),
    ])
    app.state.table = table
    return app


class Serving:
    """The app served by uvicorn in a thread, on 127.0.0.1 only (``port`` 0: any free port)."""

    def __init__(self, table: Table, port: int = 0):
        import uvicorn

        from ..errors import UsageError

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind(("127.0.0.1", port))
        except OSError as exc:
            self.sock.close()
            raise UsageError(f"--port {port}: cannot listen on 127.0.0.1:{port} ({exc.strerror}); "
                             "give another port or leave --port out") from None
        self.sock.listen(64)  # connections wait in the backlog until uvicorn serves them
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/?token={table.token}"
        config = uvicorn.Config(make_app(table), log_level="warning", access_log=False, lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def start(self) -> None:
        """Serve in a thread; returns once the server answers (at most 30 s)."""
        import time

        self.thread.start()
        end = time.monotonic() + 30
        while not self.server.started and self.thread.is_alive() and time.monotonic() < end:
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.server.should_exit = True
        self.thread.join(timeout=5)
        self.sock.close()
