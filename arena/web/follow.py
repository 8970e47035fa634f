"""The routes that follow a game in flight: its page, its viewer so far, and the state its page polls.

``/live/G/R`` is the page (its own small script, allowed by its hash, asks
``/api/games/live/G/R`` every second and moves the viewer to the newest move);
``/live/G/R/replay`` is the replay viewer of the game so far (:mod:`.live`). While the game
is played, each shows only what a spectator of the table sees, ``delay`` moves behind
(:mod:`.spectator`: no seed, no deal, no order of a deck, no hidden pile or score); once
the game is stored, each answers with (or sends to) the game's own page and its full replay.
These answers change with every move, so they say ``Cache-Control: no-store`` and the
public response cache does not keep them.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ..replay.html import SCRIPT_TEXT, STYLE_TEXT
from . import live, pages, site_pages, spectator, views
from .security import page_policy

NO_STORE = {"Cache-Control": "no-store"}
#: The live page's policy: the site's style sheet, its own script (by hash), and requests to the site only.
LIVE_POLICY = page_policy(styles=(pages.CSS,), scripts=(site_pages.LIVE_SCRIPT,)) + "; connect-src 'self'"
VIEWER_POLICY = page_policy(styles=(STYLE_TEXT,), scripts=(SCRIPT_TEXT,), framed=True)
#: Largest group or rotation number a live game can have (larger ones name nothing).
MAX_NUMBER = 2 ** 62


def routes(path: Path, public: Callable, live_games: Callable[[], list], base: str = "",
           delay: int = 0) -> list[Route]:
    """The routes following the games in flight of the league file ``path``, the public
    ``delay`` moves behind each game."""

    rendered: dict = {}  # (group, rotation, moves) -> the viewer's page, the newest few
    tables: dict = {}  # (group, rotation, moves read) -> what the public sees of it, the newest few
    rendering = threading.Lock()

    def seen(group: int, rotation: int, frozen) -> dict:
        """``{"moves", "over", "table"}`` of the game as the public sees it now."""
        key = (group, rotation, len(frozen.history))
        out = tables.get(key)
        if out is None:
            out = spectator.table(frozen, delay)
            with rendering:
                tables[key] = out
                while len(tables) > 64:
                    tables.pop(next(iter(tables)))
        return out

    def numbers(request: Request) -> tuple[int, int] | None:
        g, r = request.path_params["group"], request.path_params["rotation"]
        return (g, r) if 0 <= g < MAX_NUMBER and 0 <= r < MAX_NUMBER else None

    def stored(group: int, rotation: int) -> int | None:
        with views.opened(path) as league:
            row = league.conn.execute("SELECT id FROM games WHERE grp = ? AND rotation = ?", (group, rotation)).fetchone()
        return row[0] if row else None

    def in_flight(group: int, rotation: int) -> dict | None:
        return next((g for g in live_games() if g.get("group") == group and g.get("rotation") == rotation), None)

    def look(group: int, rotation: int) -> dict:
        """Where the game is: stored (its id), followed (its moves so far), in flight unseen, or unknown."""
        gid = stored(group, rotation)
        if gid is not None:
            return {"state": "finished", "game": gid}
        followed = live.follow(path, group, rotation)
        frozen = followed.frozen() if followed is not None else None
        if frozen is not None:
            try:
                view = seen(group, rotation, frozen)
            except Exception:  # noqa: BLE001 - moves that do not replay (a line the referee read otherwise)
                view = None
            if view is not None:
                return dict(public(followed.state()), state="playing", followed=followed, moves=view["moves"],
                            delay=delay, table=public(view["table"]))
        flight = in_flight(group, rotation)
        if flight is not None:  # handed out, not followed (built-in bots, a cluster) or not started
            return {"state": "playing", "moves": 0, "bots": flight.get("bots") or [], "started": flight.get("started"),
                    "followed": None}
        # the game may have been stored between the two looks
        gid = stored(group, rotation)
        return {"state": "finished", "game": gid} if gid is not None else {"state": "unknown"}

    def not_here(group: int, rotation: int, api: bool) -> Response:
        what = f"game {group}-{rotation} is neither in flight nor stored"
        if api:
            return JSONResponse({"error": what}, status_code=404, headers=NO_STORE)
        return HTMLResponse(pages.error_page("Not found", what[0].upper() + what[1:] + "."), status_code=404,
                            headers=NO_STORE)

    async def live_game(request: Request) -> Response:
        """A game in flight, followed move by move; its page with the finished replay once it ends."""
        key = numbers(request)
        where = await run_in_threadpool(look, *key) if key else {"state": "unknown"}
        if where["state"] == "finished":
            return RedirectResponse(f"/game/{where['game']}", status_code=303, headers=NO_STORE)
        if where["state"] != "playing":
            return not_here(*(key or (request.path_params["group"], request.path_params["rotation"])), api=False)
        page = site_pages.live_game_page(key[0], key[1], where, where["followed"] is not None)
        return HTMLResponse(page, headers={**NO_STORE, "Content-Security-Policy": LIVE_POLICY})

    def viewer(group: int, rotation: int) -> tuple[str, dict | None]:
        gid = stored(group, rotation)
        if gid is not None:
            return "finished", {"game": gid}
        followed = live.follow(path, group, rotation)
        frozen = followed.frozen() if followed is not None else None
        if frozen is None:
            return "unknown", None
        try:
            shown = seen(group, rotation, frozen)["moves"]
        except Exception:  # noqa: BLE001 - moves that do not replay (a line the referee read otherwise)
            return "unknown", None
        key = (group, rotation, shown)
        page = rendered.get(key)
        if page is None:  # each move is rendered once, however many follow the game
            try:
                page = spectator.render(public(spectator.viewer_data(frozen, delay, f"game {group}-{rotation}")))
            except Exception:  # noqa: BLE001 - moves that do not replay (a line the referee read otherwise)
                return "unknown", None
            with rendering:
                rendered[key] = page
                while len(rendered) > 16:
                    rendered.pop(next(iter(rendered)))
        return "playing", {"page": page}

    async def live_replay(request: Request) -> Response:
        """The replay viewer of a game in flight, up to its newest move (?n= is ignored: it names a version)."""
        key = numbers(request)
        state, out = await run_in_threadpool(viewer, *key) if key else ("unknown", None)
        if state == "finished":
            return RedirectResponse(f"/game/{out['game']}/replay", status_code=303, headers=NO_STORE)
        if out is None:
            return not_here(*(key or (0, 0)), api=False)
        return HTMLResponse(out["page"], headers={**NO_STORE, "Content-Security-Policy": VIEWER_POLICY})

    async def api_live_game(request: Request) -> Response:
        """A game in flight: state (playing, finished), moves so far, bots; the game's page once stored."""
        key = numbers(request)
        where = await run_in_threadpool(look, *key) if key else {"state": "unknown"}
        if where["state"] == "unknown":
            return not_here(*(key or (0, 0)), api=True)
        group, rotation = key
        out = {"group": group, "rotation": rotation, "state": where["state"]}
        if where["state"] == "finished":
            out.update(game=where["game"], game_url=f"/game/{where['game']}", url=f"{base}/game/{where['game']}")
        else:
            out.update(moves=where.get("moves", 0), delay=delay, bots=where.get("bots") or [],
                       started=where.get("started"), followed=where.get("followed") is not None,
                       table=where.get("table"), url=f"{base}/live/{group}/{rotation}")
        return JSONResponse(out, headers=NO_STORE)

    return [Route("/live/{group:id}/{rotation:id}", live_game),
            Route("/live/{group:id}/{rotation:id}/replay", live_replay),
            Route("/api/games/live/{group:id}/{rotation:id}", api_live_game)]
