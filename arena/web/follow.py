"""The routes that follow a game in flight: its page, its viewer so far, and the state its page polls.

``/live/G/R`` is the page (its own small script, allowed by its hash, asks
``/api/games/live/G/R`` every second and moves the viewer to the newest move);
``/live/G/R/replay`` is the replay viewer of the game so far (:mod:`.live`). While the game
is played, each shows only what a spectator of the table sees, ``--live-delay`` moves behind
(:mod:`.spectator`: no seed, no deal, no order of a deck, no hidden pile or score); once
the game is stored, each answers with (or sends to) the game's own page and its full replay.
These answers change with every move, so they say ``Cache-Control: no-store`` and the
public response cache does not keep them.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ..replay.html import SCRIPT_TEXT, STYLE_TEXT
from . import live, pages, site_pages, spectator, views
from .security import page_policy
from .state import SiteState, site_of

NO_STORE = {"Cache-Control": "no-store"}
#: The live page's policy: the site's style sheet, its own script (by hash), and requests to the site only.
LIVE_POLICY = page_policy(styles=(pages.CSS,), scripts=(site_pages.LIVE_SCRIPT,)) + "; connect-src 'self'"
VIEWER_POLICY = page_policy(styles=(STYLE_TEXT,), scripts=(SCRIPT_TEXT,), framed=True)
#: Largest group or rotation number a live game can have (larger ones name nothing).
MAX_NUMBER = 2 ** 62


def _seen(site: SiteState, group: int, rotation: int, frozen) -> dict:
    """``{"moves", "over", "table"}`` of the game as the public sees it now."""
    key = (group, rotation, len(frozen.history))
    out = site.followed.tables.get(key)
    if out is None:
        out = spectator.table(frozen, site.settings.live_delay)
        site.followed.tables.put(key, out)
    return out


def _numbers(request: Request) -> tuple[int, int] | None:
    g, r = request.path_params["group"], request.path_params["rotation"]
    return (g, r) if 0 <= g < MAX_NUMBER and 0 <= r < MAX_NUMBER else None


def _stored(site: SiteState, group: int, rotation: int) -> int | None:
    with views.opened(site.path) as league:
        row = league.conn.execute("SELECT id FROM games WHERE grp = ? AND rotation = ?", (group, rotation)).fetchone()
    return row[0] if row else None


def _in_flight(site: SiteState, group: int, rotation: int) -> dict | None:
    return next((g for g in site.live_games() if g.get("group") == group and g.get("rotation") == rotation), None)


def _followed_view(site: SiteState, group: int, rotation: int) -> dict | None:
    """What the public sees of a game followed move by move, or None (not followed, or moves that do not replay)."""
    followed = live.follow(site.path, group, rotation)
    frozen = followed.frozen() if followed is not None else None
    if frozen is None:
        return None
    try:
        view = _seen(site, group, rotation, frozen)
    except Exception:  # noqa: BLE001 - moves that do not replay (a line the referee read otherwise)
        return None
    return dict(site.public(followed.state()), state="playing", followed=followed, moves=view["moves"],
                delay=site.settings.live_delay, table=site.public(view["table"]))


def look(site: SiteState, group: int, rotation: int) -> dict:
    """Where the game is: stored (its id), followed (its moves so far), in flight unseen, or unknown."""
    gid = _stored(site, group, rotation)
    if gid is not None:
        return {"state": "finished", "game": gid}
    view = _followed_view(site, group, rotation)
    if view is not None:
        return view
    flight = _in_flight(site, group, rotation)
    if flight is not None:  # handed out, not followed (built-in bots, a cluster) or not started
        return {"state": "playing", "moves": 0, "bots": flight.get("bots") or [], "started": flight.get("started"),
                "followed": None}
    # the game may have been stored between the two looks
    gid = _stored(site, group, rotation)
    return {"state": "finished", "game": gid} if gid is not None else {"state": "unknown"}


def _not_here(group: int, rotation: int, api: bool) -> Response:
    what = f"game {group}-{rotation} is neither in flight nor stored"
    if api:
        return JSONResponse({"error": what}, status_code=404, headers=NO_STORE)
    return HTMLResponse(pages.error_page("Not found", what[0].upper() + what[1:] + "."), status_code=404,
                        headers=NO_STORE)


async def live_game(request: Request) -> Response:
    """A game in flight, followed move by move; its page with the finished replay once it ends."""
    key = _numbers(request)
    where = await run_in_threadpool(look, site_of(request), *key) if key else {"state": "unknown"}
    if where["state"] == "finished":
        return RedirectResponse(f"/game/{where['game']}", status_code=303, headers=NO_STORE)
    if where["state"] != "playing":
        return _not_here(*(key or (request.path_params["group"], request.path_params["rotation"])), api=False)
    page = site_pages.live_game_page(key[0], key[1], where, where["followed"] is not None)
    return HTMLResponse(page, headers={**NO_STORE, "Content-Security-Policy": LIVE_POLICY})


def viewer(site: SiteState, group: int, rotation: int) -> tuple[str, dict | None]:
    """The replay viewer of a game so far: ``("playing", {"page"})``, ``("finished", {"game"})``
    or ``("unknown", None)``. Each move is rendered once, however many follow the game."""
    gid = _stored(site, group, rotation)
    if gid is not None:
        return "finished", {"game": gid}
    followed = live.follow(site.path, group, rotation)
    frozen = followed.frozen() if followed is not None else None
    if frozen is None:
        return "unknown", None
    try:
        shown = _seen(site, group, rotation, frozen)["moves"]
    except Exception:  # noqa: BLE001 - moves that do not replay (a line the referee read otherwise)
        return "unknown", None
    key = (group, rotation, shown)
    page = site.followed.pages.get(key)
    if page is None:
        try:
            data = spectator.viewer_data(frozen, site.settings.live_delay, f"game {group}-{rotation}")
            page = spectator.render(site.public(data))
        except Exception:  # noqa: BLE001 - moves that do not replay (a line the referee read otherwise)
            return "unknown", None
        site.followed.pages.put(key, page)
    return "playing", {"page": page}


async def live_replay(request: Request) -> Response:
    """The replay viewer of a game in flight, up to its newest move (?n= is ignored: it names a version)."""
    key = _numbers(request)
    state, out = await run_in_threadpool(viewer, site_of(request), *key) if key else ("unknown", None)
    if state == "finished":
        return RedirectResponse(f"/game/{out['game']}/replay", status_code=303, headers=NO_STORE)
    if out is None:
        return _not_here(*(key or (0, 0)), api=False)
    return HTMLResponse(out["page"], headers={**NO_STORE, "Content-Security-Policy": VIEWER_POLICY})


async def api_live_game(request: Request) -> Response:
    """A game in flight: state (playing, finished), moves so far, bots; the game's page once stored."""
    site, key = site_of(request), _numbers(request)
    where = await run_in_threadpool(look, site, *key) if key else {"state": "unknown"}
    if where["state"] == "unknown":
        return _not_here(*(key or (0, 0)), api=True)
    group, rotation = key
    out = {"group": group, "rotation": rotation, "state": where["state"]}
    if where["state"] == "finished":
        out.update(game=where["game"], game_url=f"/game/{where['game']}", url=f"{site.base_url}/game/{where['game']}")
    else:
        out.update(moves=where.get("moves", 0), delay=site.settings.live_delay, bots=where.get("bots") or [],
                   started=where.get("started"), followed=where.get("followed") is not None,
                   table=where.get("table"), url=f"{site.base_url}/live/{group}/{rotation}")
    return JSONResponse(out, headers=NO_STORE)


routes = [Route("/live/{group:id}/{rotation:id}", live_game),
          Route("/live/{group:id}/{rotation:id}/replay", live_replay),
          Route("/api/games/live/{group:id}/{rotation:id}", api_live_game)]
