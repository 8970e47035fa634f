"""One game with a person in one seat, played by the referee's own loop.

The bots' seats are started, clocked and judged exactly as :func:`arena.referee.play_game`
does it (the same steps, the same sandbox, the same faults); the person's seat is given a
:class:`~arena.tabletop.seat.PersonSeat` instead of a process, so the game loop asks it with
the request a bot of that seat would get. The replay names the person in their seat.
"""

from __future__ import annotations

import time

from engine import observation

from .. import referee
from ..process.timecontrol import Clock
from .seat import NO_CLOCK_MS, PersonSeat


def person_request(request: dict, seat: int, move_ms: int | None = None) -> dict:
    """``request`` with seat ``seat`` given to the person: no command, and their own clock
    (none by default: a day a move)."""
    seats = [dict(s) for s in request["seats"]]
    seats[seat] = {"name": seats[seat]["name"], "cmd": None, "bot": None,
                   "time_control": {"move_ms": move_ms or NO_CLOCK_MS, "game_ms": None, "increment_ms": 0}}
    return {**request, "seats": seats}


def play_with_person(request: dict, seat: int, person: PersonSeat, on_end=None) -> dict:
    """Play ``request`` (a referee request, see :mod:`arena.referee`) with ``person`` in
    seat ``seat``; the answer is :func:`arena.referee.play_game`'s. ``on_end(result,
    replay_path)``, if given, stores the game before the page is told it is over."""
    t_start = time.perf_counter()
    req = referee.normalize(request)
    argvs = [[] if i == seat else referee.resolve_command(s) for i, s in enumerate(req["seats"])]
    spec, game = referee._new_game(req)
    tc = req["time_control"]
    sandbox, limits = referee._sandbox(req)
    seats = [referee._Seat(s["name"], Clock(referee._seat_time_control(tc, s))) for s in req["seats"]]
    logs = referee._seat_logs(req, seats, limits)
    launcher = referee._Launcher(req, argvs, seats, sandbox, logs, None)
    match = referee._Match(game, seats, req, tc)
    match.fresh = launcher.fresh
    person.game = game  # the seat reads what a spectator may see between moves, in this thread
    try:
        for i in range(len(seats)):
            if i == seat:
                seats[i].bot = person
            else:
                launcher.fresh(i)
        match.handshake()
        match.play()
    finally:
        match.close_all(None, None)
        launcher.close_log()
        for launch in sandbox.launches:
            launch.cleanup()
        if not game.is_over:  # stopped (Ctrl-C, an error): the page says the game ended without a result
            person.finish({"stopped": True}, None)
    sandbox_record = sandbox.record()
    replay_path, replay_error, _ = referee._write_replay(game, req, seats, match, tc, sandbox_record)
    if on_end is not None:
        on_end(game.result(), replay_path)
    person.finish(game.result(), observation(game, seat), replay_path)  # the page's end: scores and replay
    return {"result": game.result(), "seats": referee._seat_answers(seats), "sandbox": sandbox_record,
            "replay_path": replay_path, "replay_error": replay_error,
            "duration_s": round(time.perf_counter() - t_start, 3), "rules": spec.to_json(), "seed": req["seed"]}
