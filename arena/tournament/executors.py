"""Where games run: the local process pool, and the worker-side function every executor calls.

An executor takes an iterator of :class:`~arena.tournament.schedule.GameTask`, a function
that turns a task into a picklable *payload*, and a ``stop()`` predicate; it yields
``(task, reply)`` as games finish, where ``reply`` is ``{"outcome", "worker"}`` or the
exception the game function raised. Tasks are submitted lazily (at most two per worker
in flight) so an sprt can stop as soon as it decides.

The local executor is a :class:`concurrent.futures.ProcessPoolExecutor` on an explicit
``fork`` context. If a worker process dies mid-game the pool breaks: every game in flight is
rescheduled on a fresh pool (a game is retried at most ``MAX_ATTEMPTS`` times) and
``on_death`` is told which games were lost.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import socket
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterator

from ..errors import ArenaError

MAX_ATTEMPTS = 3

log = logging.getLogger("arena.worker")


class GameFailed(Exception):
    """A game could not be played (its game function raised); carries the reason."""


class WorkerLost(Exception):
    """A game was lost with its worker ``MAX_ATTEMPTS`` times and is given up for this run."""


def execute(payload: dict) -> dict:
    """Worker side: play one game with the payload's game function; returns ``{outcome, worker, cpu_s}``."""
    fn = payload.get("game_fn")
    if fn is None:
        if payload.get("play") == "inprocess":
            from .inprocess import play_inprocess as fn
        else:
            from ..referee import play_game as fn
    cpu = time.process_time()
    outcome = fn(payload["request"])
    if log.isEnabledFor(logging.DEBUG):
        log.debug("game %s played: ranking %s, %.3f s", payload.get("key"), outcome["result"]["ranking"],
                  outcome.get("duration_s") or 0.0)
    return {"outcome": outcome, "worker": f"{socket.gethostname()}:{os.getpid()}",
            "cpu_s": time.process_time() - cpu}


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class LocalExecutor:
    """A pool of ``concurrency`` forked worker processes on this machine."""

    def __init__(self, concurrency: int, initializer: Callable | None = None):
        self.concurrency = max(1, int(concurrency))
        self.initializer = initializer
        self.ctx = multiprocessing.get_context("fork")
        self.pool: ProcessPoolExecutor | None = None

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.concurrency, mp_context=self.ctx, initializer=self.initializer)

    def run(self, tasks: Iterator, payload: Callable, stop: Callable[[], bool],
            on_death: Callable[[list, str], None]) -> Iterator[tuple]:
        """Play ``tasks``; yield ``(task, reply or exception)`` as games finish."""
        tasks = iter(tasks)
        retry: deque = deque()
        attempts: dict[str, int] = {}
        inflight: dict = {}
        self.pool = self._new_pool()
        limit = 2 * self.concurrency + 2  # queued games keep workers busy while the coordinator stores
        try:
            while True:
                while len(inflight) < limit and not stop():
                    task = retry.popleft() if retry else next(tasks, None)
                    if task is None:
                        break
                    try:
                        inflight[self.pool.submit(execute, payload(task))] = task
                    except BrokenProcessPool:
                        retry.appendleft(task)
                        break
                if not inflight:
                    if stop() or not retry:
                        if not stop():
                            self.pool.shutdown(wait=True)  # idle workers: reap them (their CPU time counts)
                        return
                    self._replace_pool()
                    continue
                done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
                broken = []
                for fut in done:
                    task = inflight.pop(fut)
                    try:
                        yield task, fut.result()
                    except BrokenProcessPool:
                        broken.append(task)
                    except ArenaError as exc:  # a bad request: the runner stops
                        yield task, exc
                    except Exception as exc:  # the game function failed: report it, go on
                        yield task, GameFailed(_describe(exc))
                if broken:
                    broken += list(inflight.values())
                    inflight.clear()
                    codes = self._exit_codes()
                    lost = []
                    for task in broken:
                        attempts[task.key] = attempts.get(task.key, 0) + 1
                        if attempts[task.key] >= MAX_ATTEMPTS:
                            yield task, WorkerLost(f"lost with its worker {attempts[task.key]} times")
                        else:
                            lost.append(task)
                    retry.extendleft(reversed(lost))
                    on_death([t.key for t in broken], f"a worker process died (exit codes {codes}); "
                             f"{len(lost)} game(s) rescheduled")
                    self._replace_pool()
        finally:
            self.shutdown()

    def _exit_codes(self) -> list:
        procs = getattr(self.pool, "_processes", None) or {}
        return sorted({p.exitcode for p in procs.values() if p.exitcode not in (None, 0)}, key=str)

    def _replace_pool(self) -> None:
        self.shutdown()
        self.pool = self._new_pool()

    def shutdown(self) -> None:
        """Stop the pool; games not started are dropped, workers are not waited for."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None
