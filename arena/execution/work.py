"""The unit of work: one game as plain data, played where it arrives, and what comes back.

A *payload* is a picklable dict: ``request`` (what :func:`arena.referee.play_game` takes),
``play`` (``"inprocess"`` for built-in bots played without processes, else bot processes
through the referee), optionally ``game_fn`` (a game function of its own, called with the
request -- and with the worker's pool of bot processes when it says :func:`uses_pool`) and
``key`` (named in the worker's log). :func:`execute` plays one on the worker that received
it and answers ``{outcome, worker, cpu_s, wall_s}``.

An executor takes an iterator of tasks (anything with a ``key``; :data:`WAIT` between
them), a function that turns a task into its payload and a ``stop()`` predicate, and yields
``(task, reply)`` as games finish, where ``reply`` is the answer of :func:`execute` or the
exception that stands for the game: :class:`GameFailed` (its game function raised),
:class:`WorkerLost` (lost with its worker :data:`MAX_ATTEMPTS` times) or an
:class:`~arena.errors.ArenaError` (a bad request: the caller stops).
"""

from __future__ import annotations

import logging
import os
import socket
import time
from typing import Callable

from ..errors import ArenaError

#: how many times a game may be lost with its worker before it is given up for the run
MAX_ATTEMPTS = 3

log = logging.getLogger("arena.worker")


class _Wait:
    """What a lazy schedule yields when its next games depend on games still in flight."""

    def __repr__(self) -> str:
        return "WAIT"


#: yielded by a schedule (Swiss, a knockout, a league, a sequential experiment) whose next
#: games need the results of games in flight: an executor then feeds no more games until
#: one finishes, and asks again
WAIT = _Wait()


class GameFailed(Exception):
    """A game could not be played (its game function raised); carries the reason."""


class WorkerLost(Exception):
    """A game was lost with its worker ``MAX_ATTEMPTS`` times and is given up for this run."""


class Interrupted(ArenaError):
    """A run of games was interrupted (Ctrl-C: exit code 130; SIGTERM: 143; its output
    closed: 141); what was stored stays stored, and so do its lines. ``summary`` is the
    run's summary so far, for the caller to print the results; ``signals`` the run's
    signal handling (:class:`arena.tournament.runner.StopSignals`), when it had one."""

    exit_code = 130
    summary: dict | None = None
    signals: object | None = None


def count_loss(task, attempts: dict) -> WorkerLost | None:
    """Count one more loss of ``task`` with its worker; the :class:`WorkerLost` to report
    once it reaches ``MAX_ATTEMPTS``, else None (reschedule it)."""
    attempts[task.key] = attempts.get(task.key, 0) + 1
    if attempts[task.key] >= MAX_ATTEMPTS:
        return WorkerLost(f"lost with its worker {attempts[task.key]} times")
    return None


def count_losses(tasks, attempts: dict) -> tuple[list, list]:
    """:func:`count_loss` for each of ``tasks`` lost together: the ``(task, WorkerLost)``
    pairs to report, and the tasks to reschedule."""
    given_up, again = [], []
    for task in tasks:
        lost = count_loss(task, attempts)
        if lost is not None:
            given_up.append((task, lost))
        else:
            again.append(task)
    return given_up, again


def uses_pool(fn) -> bool:
    """Whether a game function takes the worker's pool of bot processes as its second
    argument (it says so with ``uses_pool = True``; a ``functools.partial`` of one too)."""
    return bool(getattr(fn, "uses_pool", False) or getattr(getattr(fn, "func", None), "uses_pool", False))


def play_one(request: dict, pool=None, play: str = "bots", game_fn: Callable | None = None) -> dict:
    """Play one game: with ``game_fn`` when given (passed ``pool`` when it :func:`uses_pool`),
    else in-process for ``play == "inprocess"``, else through the referee, whose bots take
    their live processes from ``pool`` (a :class:`~arena.process.pool.ProcessPool`) and give
    them back."""
    if game_fn is not None:
        return game_fn(request, pool) if uses_pool(game_fn) else game_fn(request)
    if play == "inprocess":
        from .inprocess import play_inprocess

        return play_inprocess(request)
    from ..referee import play_game

    return play_game(request, pool)


def warm(payload: dict) -> None:
    """Prepare this process for games like ``payload``'s (imports, compiled rules, the
    sandbox's probes; :func:`arena.referee.warm`), so that workers forked after it start warm.
    A payload with a game function of its own (an experiment's) is warmed as its ``play``
    says: the game functions play the request through the referee or in-process too, and a
    request that is not one is left alone (warming never raises)."""
    if (payload.get("play") or "bots") == "inprocess":
        from .inprocess import warm_inprocess

        warm_inprocess(payload["request"])
        return
    from ..referee import warm as warm_referee

    warm_referee(payload["request"])


def execute(payload: dict, pool=None) -> dict:
    """Worker side: play one game of a payload (see the module docstring).

    ``pool`` is the worker's :class:`~arena.process.pool.ProcessPool`: games of the referee
    (bot processes) take their bots' live processes from it and give them back.

    Returns ``{outcome, worker, cpu_s, wall_s}``: the CPU and wall time of the game function
    call, everything it does included (freeing the game and the bots' memory too), which is
    what a run's overhead is measured against."""
    wall, cpu = time.perf_counter(), time.process_time()
    outcome = play_one(payload["request"], pool, payload.get("play") or "bots", payload.get("game_fn"))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if log.isEnabledFor(logging.DEBUG):
        log.debug("game %s played: ranking %s, %.3f s", payload.get("key"), outcome["result"]["ranking"],
                  outcome.get("duration_s") or 0.0)
    return {"outcome": outcome, "worker": worker_name(), "cpu_s": cpu, "wall_s": wall}


_NAME: tuple[int, str] = (0, "")  # (pid, "host:pid") of this process, named once


def worker_name() -> str:
    """``host:pid`` of the process playing a game (stored with the game)."""
    global _NAME
    pid = os.getpid()
    if _NAME[0] != pid:
        _NAME = (pid, f"{socket.gethostname()}:{pid}")
    return _NAME[1]


def describe(exc: BaseException) -> str:
    """An exception as one line: its class, and its message when it has one."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
