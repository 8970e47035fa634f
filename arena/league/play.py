"""``arena league play``: plan seat-rotated groups lazily, play them on an executor, store each game.

Groups are planned one at a time as the executor asks for work: the counts of games and
meetings include the groups in flight, and the ratings the matchmaking uses are those of
every group at least :data:`LOOKAHEAD_GROUPS` groups back (refitted whenever that basis
grew by 5%). Group *g* waits (:data:`~arena.execution.work.WAIT`) until every group
before *g* - ``LOOKAHEAD_GROUPS`` is played, so its table is a function of stored results
alone, never of which games happened to finish first: a league plays the same games on
one core, on many, and on a Dask cluster. A group whose entries are all built-in bots is
played in-process (no bot processes: :mod:`arena.execution.inprocess`); any other group
goes through the referee with bot processes.
"""

from __future__ import annotations

import math
import random
import sqlite3
import time
from typing import Callable

from ..execution.local import LocalExecutor
from ..execution.work import WAIT, Interrupted
from ..tournament.schedule import GameTask, group_seed, rotate
from .matchmaking import game_counts, meetings_of, pick_table, uncertainty
from .store import League, LeagueError
from .table import ratings


#: how many groups may be planned past the last one whose results the matchmaking has (the
#: games a run may have in flight at once: ``LOOKAHEAD_GROUPS`` x seats)
LOOKAHEAD_GROUPS = 32


def builtin_policies() -> set[str]:
    """Names of the bots that can be played in-process."""
    from arena.plugins import policy_names
    return set(policy_names())


def _record(league: League, task: GameTask, outcome: dict, mode: str, tries: int = 20) -> bool:
    """:meth:`League.record_game`, waiting out another program's long write (an operator's
    ``league add`` or backup) instead of losing a played game."""
    for attempt in range(tries):
        try:
            return league.record_game(task, outcome, mode)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or attempt == tries - 1:
                raise
            time.sleep(min(5.0, 0.1 * 2 ** attempt))
    return False


def _place_replay(pending, folder, task: GameTask, stored: bool) -> None:
    """Move a stored game's replay into place; remove that of a game not stored."""
    import os

    name = f"{task.group}-{task.rotation}.json"
    try:
        if stored and (pending / name).exists():
            os.replace(pending / name, folder / name)
        else:
            (pending / name).unlink(missing_ok=True)
    except OSError:
        pass


def prune_replays(folder, keep: int) -> int:
    """Keep the replays of the newest ``keep`` games in ``folder`` (by group, then rotation);
    how many were removed. Their games stay in the league file; their pages say no replay
    is kept."""
    import os
    import re

    found = []
    for entry in os.scandir(folder):
        m = re.fullmatch(r"(\d+)-(\d+)\.json", entry.name)
        if m:
            found.append((int(m[1]), int(m[2]), entry.path))
    found.sort()
    gone = found[:max(0, len(found) - keep)]
    for _, _, path in gone:
        try:
            os.unlink(path)
        except OSError:
            pass
    return len(gone)


def set_deal_book(league: League, deals: list[dict]) -> None:
    """Keep a deal book in the league file (group i plays deal i, cycled); the file moves with it."""
    league._set_meta("deals", list(deals))


def unfinished_groups(stored: list[dict], seats: int) -> dict[int, tuple[tuple[str, ...], int, list[int]]]:
    """Groups a stopped run left incomplete: ``{group: (table, seed, missing rotations)}``."""
    by_group: dict[int, list[dict]] = {}
    for g in stored:
        by_group.setdefault(g["group"], []).append(g)
    out = {}
    for group, games in sorted(by_group.items()):
        done = {g["rotation"] for g in games}
        if len(done) < seats:
            g = games[0]
            bots = [x["bot"] for x in g["seats"]]  # in seat order
            r = g["rotation"]
            table = tuple(bots[(j - r) % seats] for j in range(seats))  # undo rotate(table, r)
            out[group] = (table, g["seed"], sorted(set(range(seats)) - done))
    return out


def play_league(league: League, games: int, concurrency: int = 2, play: str = "auto",
                echo: Callable[[str], None] | None = None, executor=None, progress: bool = False,
                tick_s: float = 10.0, sandbox: str | None = None, priority: str = "fewest",
                on_stored: Callable[[GameTask, dict, bool], None] | None = None, replays=None,
                keep_replays: int = 0) -> dict:
    """Play at least ``games`` games (whole groups) and store each as it finishes; returns a summary.

    The rotations a stopped run left unplayed are played first (and count towards
    ``games``), so after Ctrl-C or kill -9 every group ends up complete and no game is
    played twice. ``progress`` shows a bar; without it a line is echoed every ``tick_s`` s.
    ``sandbox`` overrides the league's tier for bot processes (the website plays strict);
    ``priority="uncertain"`` builds each group around the entry whose rating is least
    certain rather than the one with fewest games. ``on_stored(task, reply, stored)`` is
    called after each game's transaction (``stored`` False: that game was stored before).
    ``replays`` (a folder) keeps each stored game's replay as ``GROUP-ROTATION.json`` there
    (written to ``.pending/`` while it plays, moved into place once its game is committed,
    removed if it is not), the layout ``arena serve`` reads; ``keep_replays`` > 0 keeps only
    the newest that many.
    """
    echo = echo or (lambda text: None)
    planner = _Planner(league, play, priority)
    owed = planner.owed
    if owed:
        echo(f"arena: first completing {len(planner.unfinished)} group{'s' if len(planner.unfinished) != 1 else ''} "
             f"a stopped run left unfinished ({owed} games)")
    planner.groups = max(0, math.ceil((games - owed) / league.seats))
    pending = None
    if replays is not None:
        from pathlib import Path

        replays = Path(replays)
        pending = replays / ".pending"
        pending.mkdir(mode=0o700, parents=True, exist_ok=True)
    payload = _payloads(league, planner, sandbox, pending)
    summary = {"scheduled": planner.groups * league.seats + owed, "played": 0, "failed": [], "worker_deaths": 0,
               "completed": owed}
    from tqdm import tqdm

    from ..progress import Ticker

    bar = tqdm(total=summary["scheduled"], unit="game", disable=not progress, dynamic_ncols=True)
    ticker = Ticker(summary["scheduled"], 0, echo, every_s=tick_s)
    executor = executor or LocalExecutor(concurrency)

    def on_death(keys, detail) -> None:
        summary["worker_deaths"] += 1
        echo(f"arena: {detail} (games {', '.join(keys)})")

    t0 = time.perf_counter()
    try:
        for task, reply in executor.run(planner.tasks(), payload, lambda: False, on_death):
            planner.back(task)
            if isinstance(reply, Exception):
                summary["failed"].append(f"{task.key}: {reply}")
                echo(f"arena: game {task.key} was not played ({reply})")
                continue
            stored = _record(league, task, reply["outcome"], planner.modes[task.group])
            if pending is not None:
                _place_replay(pending, replays, task, stored)
                if keep_replays and summary["played"] % 50 == 0:
                    prune_replays(replays, keep_replays)
            if on_stored is not None:
                on_stored(task, reply, stored)
            if stored:
                summary["played"] += 1
                bar.update(1)
                if not progress:
                    ticker.update(1)
                planner.stored(task, reply["outcome"]["result"]["ranking"])
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted: {summary['played']} games were stored in {league.path}; "
                          f"`arena league play` completes the unfinished groups first") from None
    finally:
        bar.close()
    if pending is not None and keep_replays:
        prune_replays(replays, keep_replays)
    if not progress and ticker.played:
        echo(ticker.line())
    summary["elapsed_s"] = time.perf_counter() - t0
    return summary


class _Planner:
    """A league run's groups, planned lazily as the executor asks for games (see the module
    docstring): first the rotations a stopped run left unplayed, then :attr:`groups` new
    groups from the league's next one, each table picked from the counts, the meetings and
    the ratings of the groups at least :data:`LOOKAHEAD_GROUPS` back."""

    def __init__(self, league: League, play: str, priority: str):
        self.league, self.play, self.priority = league, play, priority
        self.seats = seats = league.seats
        self.active = [e.name for e in league.entries(active_only=True)]
        if len(self.active) < seats:
            raise LeagueError(f"{league.path}: {seats} seats need at least {seats} active entries, "
                              f"got {len(self.active)} (add some with `arena league add`)")
        self.entries = {e.name: e for e in league.entries()}
        self.builtin = builtin_policies()
        stored = league.games()
        self.counts = game_counts(stored)
        self.met = meetings_of(stored)
        self.elo: dict = {}
        self.fitted_at = -1
        self.stored_games = stored
        self.seed = int(league.meta("seed", 0))
        self.unfinished = {g: t for g, t in unfinished_groups(stored, seats).items()
                           if all(n in self.active for n in t[0])}
        self.owed = sum(len(t[2]) for t in self.unfinished.values())
        self.groups = 0
        self.first = league.next_group()
        self.modes: dict[int, str] = {}
        # games of this run not yet back, per group: a group's results count for the
        # matchmaking once none are (a game that could not be played counts as back)
        self.out: dict[int, int] = {g: len(t[2]) for g, t in self.unfinished.items()}

    def mode(self, table) -> str:
        """``inprocess`` for a table of built-in bots (unless the run plays bots), else ``bots``."""
        return "inprocess" if self.play != "bots" and all(self.entries[n].bot in self.builtin for n in table) \
            else "bots"

    def refit(self, basis: list[dict]) -> None:
        """Refit the ratings when their basis grew by 5% since the last fit."""
        n = len(basis)
        if n and (self.fitted_at < 0 or n >= self.fitted_at * 1.05 + 1):
            fit = ratings(self.league, basis, bootstrap=0)
            self.elo = dict(fit.elo) if fit else {}
            self.fitted_at = n

    def tasks(self):
        """Every game of the run, lazily; :data:`WAIT` while a group's table needs results in flight."""
        name = self.league.path.name
        for group, (table, gseed, missing) in self.unfinished.items():
            self.modes[group] = self.mode(table)
            for rotation in missing:
                yield GameTask(f"{name}:{group}:{rotation}:{gseed}", group, rotation, gseed, rotate(table, rotation))
        for group in range(self.first, self.first + self.groups):
            known = group - LOOKAHEAD_GROUPS  # the groups before this one decide its table
            while any(left and g < known for g, left in self.out.items()):
                yield WAIT
            table, gseed = self.table(group, known)
            for rotation in range(self.seats):
                yield GameTask(f"{name}:{group}:{rotation}:{gseed}", group, rotation, gseed, rotate(table, rotation))

    def table(self, group: int, known: int) -> tuple[tuple[str, ...], int]:
        """Group ``group``'s table and seed, from the stored results of the groups before
        ``known``; its games and meetings counted at once."""
        # in a fixed order: the fit must not depend on which game came back first
        basis = sorted((x for x in self.stored_games if x["group"] < known),
                       key=lambda x: (x["group"], [str(s["bot"]) for s in x["seats"]]))
        self.refit(basis)
        seats = self.seats
        self.out[group] = seats
        gseed = group_seed(self.seed, group)
        doubt = uncertainty(basis, self.elo, self.active) if self.priority == "uncertain" else None
        table = pick_table(self.active, self.counts, self.elo, self.met, seats, random.Random(gseed), doubt)
        self.modes[group] = self.mode(table)
        for n in table:
            self.counts[n] = self.counts.get(n, 0) + seats
        for i, a in enumerate(table):
            for b in table[i + 1:]:
                self.met[frozenset((a, b))] = self.met.get(frozenset((a, b)), 0) + seats
        return table, gseed

    def back(self, task: GameTask) -> None:
        """A game of the run came back (played or not)."""
        if task.group in self.out:
            self.out[task.group] -= 1

    def stored(self, task: GameTask, ranks: list[int]) -> None:
        """A game stored by this run: its result counts for the tables of later groups."""
        self.stored_games.append({"group": task.group,
                                  "seats": [{"bot": n, "rank": r} for n, r in zip(task.bots, ranks)]})


def _payloads(league: League, planner: _Planner, sandbox: str | None, pending) -> Callable[[GameTask], dict]:
    """The function that turns a league game into its payload (its replay in ``pending``)."""
    seats, entries = league.seats, planner.entries
    rules = league.spec.to_json()
    tc = league.meta("time_control") or {}
    sandbox = sandbox or league.meta("sandbox", "auto")
    book = league.meta("deals") or []  # a deal book given to `arena league new --deals`

    def payload(task: GameTask) -> dict:
        replay = str(pending / f"{task.group}-{task.rotation}.json") if pending is not None else None
        request = {"seats": [entries[n].seat_request() for n in task.bots], "rules": rules, "players": seats,
                   "seed": task.seed, "deal": book[task.group % len(book)] if book else None,
                   "time_control": tc, "fault_policy": "forfeit", "sandbox": sandbox, "pause_idle": False,
                   "replay_path": replay, "log_dir": None}
        return {"request": request, "play": planner.modes[task.group]}

    return payload
