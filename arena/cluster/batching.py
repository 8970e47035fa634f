"""Games grouped into the tasks of a cluster run: a task plays short games in a row, about
``batch_s`` seconds of them by their expected times (:class:`Timing`), so the scheduler's
cost per task is not paid by every game; near the end of the run the batches shrink so the
workers finish together."""

from __future__ import annotations

import statistics
from collections import deque


def take_batch(retry: deque, ahead: deque, timing: "Timing", batch_s: float, most: int,
               threads: int | None = None, least_s: float = 0.0) -> list:
    """The games of the next task, taken from ``retry`` first, then ``ahead``: games whose
    expected times add up to about ``batch_s`` (the first always; a game nothing is known of
    plays alone), at most ``most``. ``threads`` is given when every game left to submit is
    in sight: the batch is then at most half of an even share of them per worker thread,
    so the last games spread over every worker instead of waiting in one worker's batch.
    Neither count leaves a batch shorter than ``least_s`` by its games' expected times (a
    task costs the coordinator the same however short, and one coordinator serves every
    worker: see :attr:`~arena.cluster.executor.DaskExecutor.least_s_per_thread`)."""
    share = most
    if threads:
        share = min(share, -(-(len(retry) + len(ahead)) // (2 * threads)))
    group: list = []
    expected = 0.0
    while retry or ahead:
        if len(group) >= share and expected >= least_s:
            break
        source = retry if retry else ahead
        guess = timing.guess(source[0])
        if group and (guess is None or expected + guess > batch_s):
            break
        group.append(source.popleft())
        if guess is None:
            break
        expected += guess
    return group


class Timing:
    """What a game is expected to take, from the wall times of the games played so far.

    A game in which a bot process started (its worker's pool had none for that bot yet, or
    replaced one) takes far longer than the games that reuse the process -- 0.4-0.7 s
    against 30-50 ms for two greedy bots -- and on a cluster every worker starts its own,
    so at the start of a run most games are such games. They are kept apart: the guess is
    the median of the latest games of the same bots that started no process (pairings
    differ in speed: random against random, planner against planner), else the median of
    the run's latest such games (or the longest of the few games of the same bots, when
    longer), else, while every game timed started processes, their median (the guess errs
    long), else nothing. A median, as a game that met a busy moment of its machine (ten
    times its usual length where workers outnumber cores) would hold a mean up for long."""

    def __init__(self):
        self.latest: deque = deque(maxlen=64)
        self.starting: deque = deque(maxlen=16)
        self.by_bots: dict[tuple, deque] = {}
        self.processes: set = set()  # (worker, pid) of every bot process seen in a result

    def known(self) -> bool:
        """Whether any game has been timed."""
        return bool(self.latest or self.starting)

    def add(self, task, wall: float, started: bool = False) -> None:
        if started:
            self.starting.append(wall)
            return
        self.latest.append(wall)
        self.by_bots.setdefault(_bots(task), deque(maxlen=9)).append(wall)

    def add_result(self, task, reply: dict) -> None:
        """Time a game from its worker's reply (``wall_s``; a seat whose ``pid`` this run has
        not seen on that worker started its process in this game)."""
        worker = reply.get("worker")
        started = False
        for seat in (reply.get("outcome") or {}).get("seats") or ():
            pid = seat.get("pid") if isinstance(seat, dict) else None
            if pid is not None and (worker, pid) not in self.processes:
                self.processes.add((worker, pid))
                started = True
        self.add(task, reply.get("wall_s") or 0.0, started)

    def guess(self, task) -> float | None:
        own = self.by_bots.get(_bots(task))
        if own is not None and len(own) >= 3:
            return max(statistics.median(own), 1e-3)
        if self.latest:  # the run's median, or the few games of these bots if one was longer
            return max(statistics.median(self.latest), *(own or ()), 1e-3)
        if self.starting:
            return max(statistics.median(self.starting), 1e-3)
        return None


def _bots(task) -> tuple:
    """Whom a task's game seats (tasks of other schedules may not say: timed as one kind)."""
    return tuple(getattr(task, "bots", None) or ())
