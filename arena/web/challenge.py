"""A person against a bot of the league: ``/play/BOT`` on the league's site.

A signed-in author (their token sent in a form's body, as for ``/me``) challenges any
active bot of the league; the game is played by the referee under the league's rules, the
bot in the league's sandbox tier and clock (:mod:`arena.tabletop`), the author in the page
of :mod:`arena.tabletop.server`, served under ``/play/game/ID/`` with a key of its own in
the address (not the author's token). Each author may have one such game in play and
:data:`PER_HOUR` an hour. The game is stored apart from the league's games
(``people_games``, :func:`arena.league.store.person_games`), with its replay: it moves no
bot's rating, and ``/play`` shows the people-versus-bots table. Nothing of a game in play
is public: its page answers only to its key.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from ..league import store as league_store
from ..league.store import LeagueError
from ..tabletop import server
from ..tabletop.run import card_data
from ..tabletop.seat import PersonSeat
from ..tabletop.table import person_request, play_with_person
from . import store, views
from .pages import esc, layout, link_bot, when
from .player import replays_dir
from .reading import form_token, ident
from .state import SiteState, site_of

log = logging.getLogger(__name__)

#: People's games an author may start in an hour; games in play on the site at once.
PER_HOUR = 6
AT_ONCE = 8
PRIVATE = {"Cache-Control": "no-store"}


def _form(bot: str, error: str | None = None) -> str:
    err = f'<p class="bad" id="error">{esc(error)}</p>' if error else ""
    return layout(f"Play {bot}", f"{err}<p>Play a game against {link_bot(bot.split('@')[0], bot)} under the league's "
                  "rules, in your browser. Your game is stored with its replay in the people-versus-bots table; "
                  "it does not change any bot's rating. Give the token the league's operator made for you.</p>"
                  f'<form id="challenge" method="post" action="/play/{esc(bot)}"><p><label>Token <input '
                  'type="password" name="token" size="50" required autocomplete="current-password"></label> '
                  '<button type="submit">Play</button></p></form>')


def challenge_form(request: Request) -> Response:
    """A form to play a bot yourself (your token is sent by POST)."""
    return HTMLResponse(_form(request.path_params["bot"]), headers=PRIVATE)


def _refusal(site: SiteState, author: str | None, bot: str) -> tuple[int, str] | None:
    """Why ``author`` may not start a game against ``bot`` now, or None."""
    if author is None:
        return 401, "Unknown token: give the token the league's operator made for you."
    if any(t.author == author and not t.person.view()["over"] for t in site.tables.values()):
        return 429, "You have a game in play already: finish it first."
    if sum(not t.person.view()["over"] for t in site.tables.values()) >= AT_ONCE:
        return 429, f"The site has {AT_ONCE} people's games in play: try again in a few minutes."
    with views.opened(site.path) as league:
        if len(league_store.person_games(league, author, time.time() - 3600)) >= PER_HOUR:
            return 429, f"You have played {PER_HOUR} games in the last hour, the most an hour: try again later."
        try:
            entry = league.entry(bot)
        except LeagueError:
            entry = None
        if entry is None or not entry.active:
            return 404, f"No active bot {bot!r} in this league: pick one on the leaderboard."
    return None


def _start(site: SiteState, token: str, bot: str) -> tuple[int, str]:
    """``(303, the game's address)``, or ``(status, a sentence)``."""
    with views.opened(site.path) as league:
        author = store.author_of(league, token)
    refused = _refusal(site, author, bot)
    if refused is not None:
        return refused
    from .submissions import private_paths

    seed = secrets.randbelow(2 ** 31)
    with views.opened(site.path) as league:
        seats, entry = league.seats, league.entry(bot)
        seat = seats - 1
        gid = league_store.start_person_game(league, author, bot, seat, seed)
        request = {"seats": [entry.seat_request() for _ in range(seats)], "rules": league.spec.to_json(),
                   "players": seats, "seed": seed, "time_control": league.meta("time_control") or {},
                   "fault_policy": "forfeit", "sandbox": site.settings.game_tier, "private_paths": private_paths(site.path),
                   "replay_path": str(replays_dir(site.path) / f"person-{gid}.json")}
    request = person_request(request, seat)
    request["seats"][seat]["name"] = author
    replays_dir(site.path).mkdir(parents=True, exist_ok=True)
    person = PersonSeat(author)
    table = server.Table(person, seat, [s["name"] for s in request["seats"]], card_data(request["rules"], seats))
    table.author = author
    over = [k for k, t in site.tables.items() if t.person.view()["over"]]
    for k in over[:-32]:  # the newest ended games keep their page (scores, replay link) a while
        site.tables.pop(k, None)
    site.tables[gid] = table
    threading.Thread(target=_play, args=(site, gid, request, seat, person), daemon=True,
                     name=f"person-game-{gid}").start()
    return 303, f"/play/game/{gid}/?token={table.token}"


def _play(site: SiteState, gid: int, request: dict, seat: int, person: PersonSeat) -> None:
    def store_it(result: dict, replay: str | None) -> None:
        with views.opened(site.path) as league:
            league_store.finish_person_game(league, gid, result, replay and f"person-{gid}.json")

    try:
        play_with_person(request, seat, person, on_end=store_it)
    except Exception as exc:  # a bot that cannot start, a sandbox that cannot run: the page says so
        log.warning("a person's game #%d stopped: %s", gid, exc)
        store_it({}, None)
        person.finish({"stopped": True, "error": str(site.public(str(exc)))[:300]}, None)


async def challenge(request: Request) -> Response:
    """Play a bot of the league yourself (form: token); rate-limited per author."""
    bot = request.path_params["bot"]
    token = await form_token(request)
    status, said = await run_in_threadpool(_start, site_of(request), token, bot)
    if status == 303:
        return RedirectResponse(said, status_code=303, headers=PRIVATE)
    return HTMLResponse(_form(bot, said), status_code=status, headers=PRIVATE)


def _at_table(endpoint):
    """``endpoint`` of the table's server, for the game ``/play/game/ID/`` names."""
    async def at_table(request: Request) -> Response:
        table = site_of(request).tables.get(ident(request, "gid"))
        if table is None:
            return HTMLResponse(layout("Not found", "<p>No game of a person in play here.</p>"), status_code=404,
                                headers=PRIVATE)
        request.state.table = table
        return await endpoint(request)
    at_table.__doc__ = f"A person's game in play: {endpoint.__name__} (answers only to the game's key)."
    return at_table


def watch(request: Request) -> Response:
    """What anyone may see of a person's game: what a spectator sees (never the seed, the decks'
    order or a hidden score), as of the person's last move."""
    from starlette.responses import JSONResponse

    table = site_of(request).tables.get(ident(request, "gid"))
    if table is None or table.person.public is None:
        return JSONResponse({"error": "no game of a person in play with this number"}, status_code=404,
                            headers=PRIVATE)
    return JSONResponse({"bots": table.names, **table.person.public}, headers=PRIVATE)


def people_table(request: Request) -> Response:
    """People versus bots: every person's game against a bot of the league, newest first."""
    site = site_of(request)
    with views.opened(site.path) as league:
        games = league_store.person_games(league)
    rows = []
    for g in games[:200]:
        s, scores, ranks = g["seat"], g["scores"], g["ranking"]
        if scores:
            person, bots = scores[s], max(x for i, x in enumerate(scores) if i != s)
            outcome = "won" if ranks[s] == 1 and ranks.count(1) == 1 else "drew" if ranks[s] == 1 else "lost"
            score = f"{person}–{bots} ({outcome})"
        else:
            score = "in play" if g["finished"] is None else "stopped"
        rows.append(f"<tr><td>{g['id']}</td><td>{esc(g['author'])}</td><td>{link_bot(g['bot'].split('@')[0], g['bot'])}"
                    f"</td><td>{esc(score)}</td><td>{esc(when(g['started']))}</td></tr>")
    body = ("<p>Games people played against the league's bots (<code>/play/BOT</code>). They are kept apart: "
            "they change no bot's rating.</p><table id=\"people\"><tr><th>#</th><th>person</th><th>bot</th>"
            "<th>person–best bot</th><th>started</th></tr>" + "".join(rows) + "</table>")
    return HTMLResponse(layout("People versus bots", body))


routes = [
    Route("/play", people_table),
    Route("/play/{bot}", challenge_form, methods=["GET"]),
    Route("/play/{bot}", challenge, methods=["POST"]),
    Route("/play/game/{gid:id}/", _at_table(server.page)),
    Route("/play/game/{gid:id}/page.js", _at_table(server.script)),
    Route("/play/game/{gid:id}/page.css", _at_table(server.style)),
    Route("/play/game/{gid:id}/api/state", _at_table(server.state)),
    Route("/play/game/{gid:id}/api/cards", _at_table(server.cards)),
    Route("/play/game/{gid:id}/api/action", _at_table(server.action), methods=["POST"]),
    Route("/play/game/{gid:id}/api/leave", _at_table(server.leave), methods=["POST"]),
    Route("/play/game/{gid:id}/replay", _at_table(server.replay)),
    Route("/api/play/{gid:id}", watch),
]
