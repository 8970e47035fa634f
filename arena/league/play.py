"""``arena league play``: plan seat-rotated groups lazily, play them on the runner's pool, store each game.

Groups are planned one at a time as the pool asks for work, from the games stored so far
plus those in flight, so the matchmaking always sees the latest counts; ratings for the
matchmaking are refitted whenever 5% more games are stored. A group whose entries are all
built-in bots is played in-process (no bot processes, as the tournament runner's
``inprocess`` executor does); any other group goes through the referee with bot processes.
"""

from __future__ import annotations

import math
import random
import time
from typing import Callable

from ..errors import ArenaError
from ..tournament.executors import LocalExecutor
from ..tournament.schedule import GameTask, group_seed, rotate
from .matchmaking import game_counts, meetings_of, pick_table
from .store import League, LeagueError
from .table import ratings


def builtin_policies() -> set[str]:
    """Names of the bots that can be played in-process."""
    from arena.plugins import policy_names
    return set(policy_names())


def set_deal_book(league: League, deals: list[dict]) -> None:
    """Keep a deal book in the league file (group i plays deal i, cycled); the file moves with it."""
    league._set_meta("deals", list(deals))


def play_league(league: League, games: int, concurrency: int = 2, play: str = "auto",
                echo: Callable[[str], None] | None = None, executor=None) -> dict:
    """Play at least ``games`` games (whole groups) and store them; returns a summary."""
    seats = league.seats
    active = [e.name for e in league.entries(active_only=True)]
    if len(active) < seats:
        raise LeagueError(f"{league.path}: {seats} seats need at least {seats} active entries, "
                          f"got {len(active)} (add some with `arena league add`)")
    entries = {e.name: e for e in league.entries()}
    builtin = builtin_policies()
    stored = league.games()
    counts = game_counts(stored)
    met = meetings_of(stored)
    state = {"elo": {}, "fitted_at": -1, "stored": stored}
    rules = league.spec.to_json()
    seed = int(league.meta("seed", 0))
    tc = league.meta("time_control") or {}
    sandbox = league.meta("sandbox", "basic")
    book = league.meta("deals") or []  # a deal book given to `arena league new --deals`
    groups = math.ceil(games / seats)
    first = league.next_group()
    modes: dict[int, str] = {}
    echo = echo or (lambda text: None)

    def refit() -> None:
        n = len(state["stored"])
        if n and (state["fitted_at"] < 0 or n >= state["fitted_at"] * 1.05 + 1):
            fit = ratings(league, state["stored"], bootstrap=0)
            state["elo"] = dict(fit.elo) if fit else {}
            state["fitted_at"] = n

    def tasks():
        for group in range(first, first + groups):
            refit()
            gseed = group_seed(seed, group)
            table = pick_table(active, counts, state["elo"], met, seats, random.Random(gseed))
            inproc = play != "bots" and all(entries[n].bot in builtin for n in table)
            modes[group] = "inprocess" if inproc else "bots"
            for n in table:
                counts[n] = counts.get(n, 0) + seats
            for i, a in enumerate(table):
                for b in table[i + 1:]:
                    met[frozenset((a, b))] = met.get(frozenset((a, b)), 0) + seats
            for rotation in range(seats):
                yield GameTask(f"{league.path.name}:{group}:{rotation}:{gseed}", group, rotation, gseed,
                               rotate(table, rotation))

    def payload(task: GameTask) -> dict:
        request = {"seats": [entries[n].seat_request() for n in task.bots], "rules": rules, "players": seats,
                   "seed": task.seed, "deal": book[task.group % len(book)] if book else None, "time_control": tc, "fault_policy": "forfeit",
                   "sandbox": sandbox, "pause_idle": False, "replay_path": None, "log_dir": None}
        return {"request": request, "play": modes[task.group]}

    summary = {"scheduled": groups * seats, "played": 0, "failed": [], "worker_deaths": 0}
    executor = executor or LocalExecutor(concurrency)

    def on_death(keys, detail) -> None:
        summary["worker_deaths"] += 1
        echo(f"arena: {detail} (games {', '.join(keys)})")

    t0 = time.perf_counter()
    try:
        for task, reply in executor.run(tasks(), payload, lambda: False, on_death):
            if isinstance(reply, Exception):
                summary["failed"].append(f"{task.key}: {reply}")
                echo(f"arena: game {task.key} was not played ({reply})")
                continue
            if league.record_game(task, reply["outcome"], modes[task.group]):
                summary["played"] += 1
                ranks = reply["outcome"]["result"]["ranking"]
                state["stored"].append({"group": task.group,
                                        "seats": [{"bot": n, "rank": r} for n, r in zip(task.bots, ranks)]})
    except KeyboardInterrupt:
        raise ArenaError(f"interrupted: {summary['played']} games were stored in {league.path}") from None
    summary["elapsed_s"] = time.perf_counter() - t0
    return summary
