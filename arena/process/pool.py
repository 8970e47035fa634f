"""Bot processes kept alive between games: a worker's pool of live :class:`BotProcess` objects.

Starting an interpreter and shaking hands costs far more than a game's moves, so a worker
keeps each bot's process -- and its sandbox launch: working directory, cgroup -- between
the games it plays, and starts the next game with a new ``hello`` (``docs/protocol.md``,
"Several games per process"). The pool sits above :class:`BotProcess`; the referee takes a
process for a seat (:meth:`ProcessPool.take`) and gives it back after the game
(:meth:`ProcessPool.give`), and everything that belongs to a game -- its clock, verdicts,
CPU accounting, stderr log boundary -- stays the referee's, per game.

A process is *not* given back, but closed, when

- its seat had any fault in the game (crash, timeout, illegal action, protocol error ...):
  the next game starts with a fresh process;
- it has played ``max_games`` games (the tournament's ``max_games_per_process``);
- its sandbox must be reset: it reached its memory cap, or used more than half of its CPU
  rlimit (``sandbox_options.cpu_s``), which is per process and would otherwise end a
  long-lived bot in the middle of a later game;
- the game did not end normally (the referee raised), or the tournament asks for
  ``fresh_process: true`` (then no pool is used at all).

A pooled process found dead when it is taken (it crashed between games) is closed and
counted in :attr:`ProcessPool.stats` -- charged to nobody's result: the seat gets a fresh
process. Processes are keyed by what makes them interchangeable: the entrant's name, its
command line, the sandbox tier and options, and the log folder. :meth:`ProcessPool.close`
kills every idle process; a worker calls it when it exits, so no bot outlives a run.
"""

from __future__ import annotations

import itertools
import json
import logging

from .botproc import BotProcess
from .transport import State

log = logging.getLogger("arena.pool")

#: games one process plays before it is replaced (the tournament's ``max_games_per_process``)
DEFAULT_MAX_GAMES = 100

_serial = itertools.count(1)


def pool_key(name: str, argv: list[str], tier: str, sandbox_options: dict, log_dir: str | None) -> str:
    """What makes two seats' processes interchangeable, as one string."""
    return json.dumps([name, list(argv), tier, sandbox_options, log_dir], sort_keys=True, default=str)


class PooledBot:
    """A live bot process with what it needs between games: its launch, log and game count."""

    __slots__ = ("key", "bot", "launch", "log", "games", "serial")

    def __init__(self, key: str, bot: BotProcess, launch, log_path: str | None):
        self.key = key
        self.bot = bot
        self.launch = launch
        self.log = log_path
        self.games = 0
        self.serial = next(_serial)

    def usable(self) -> bool:
        """Alive, idle and not yet killed: it can be asked to play another game."""
        bot = self.bot
        return not bot.dead and bot.transport.state is State.IDLE and bot.transport.alive()

    def close(self) -> None:
        """Kill the process and clean its sandbox launch up."""
        try:
            if self.bot.transport.state is not State.CLOSED:
                self.bot.close()
        finally:
            self.launch.cleanup()


class ProcessPool:
    """Idle bot processes of one worker, by key; see the module docstring."""

    def __init__(self, max_games: int = DEFAULT_MAX_GAMES, cpu_budget_s: float | None = None):
        self.max_games = max(1, int(max_games))
        self.cpu_budget_s = cpu_budget_s
        self.idle: dict[str, list[PooledBot]] = {}
        self.stats = {"started": 0, "reused": 0, "retired": 0, "faulted": 0, "died_idle": 0, "reset": 0}

    def take(self, key: str) -> PooledBot | None:
        """A live idle process for ``key`` (it leaves the pool), or None: start a new one."""
        queue = self.idle.get(key)
        while queue:
            entry = queue.pop()
            if entry.usable():
                self.stats["reused"] += 1
                return entry
            # it died between games: nobody's fault, nobody's result
            self.stats["died_idle"] += 1
            log.info("bot process %s died between games; a fresh one takes its place", entry.bot.label)
            entry.close()
        return None

    def started(self) -> None:
        """Count a process the referee started for the pool."""
        self.stats["started"] += 1

    def give(self, entry: PooledBot, clean: bool, cpu_limit_s: float | None = None) -> bool:
        """Back after a game: kept if ``clean`` and still fit for another game (True), else
        closed (False)."""
        entry.games += 1
        reason = None
        if not clean:
            reason = "faulted"
        elif entry.games >= self.max_games:
            reason = "retired"
        elif not entry.usable():
            reason = "faulted"
        elif self._needs_reset(entry, cpu_limit_s):
            reason = "reset"
        if reason is not None:
            self.stats[reason] += 1
            entry.close()
            return False
        self.idle.setdefault(entry.key, []).append(entry)
        return True

    @staticmethod
    def _needs_reset(entry: PooledBot, cpu_limit_s: float | None) -> bool:
        launch = entry.launch
        try:
            if launch.memory_pressed():
                return True
        except (AttributeError, OSError):
            pass
        if cpu_limit_s:
            used = entry.bot.transport.cpu_seconds()
            if used > cpu_limit_s / 2:
                return True
        return False

    def __len__(self) -> int:
        return sum(len(q) for q in self.idle.values())

    def close(self) -> None:
        """Kill every idle process (the worker is done)."""
        idle, self.idle = self.idle, {}
        for queue in idle.values():
            for entry in queue:
                try:
                    entry.close()
                except Exception:  # closing is best effort: the next one must still be killed
                    log.exception("closing bot process %s", entry.bot.label)
