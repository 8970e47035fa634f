"""Games grouped into the tasks of a cluster run: a task plays short games in a row, about
``batch_s`` seconds of them by their expected times (:class:`Timing`), so the scheduler's
cost per task is not paid by every game; near the end of the run the batches shrink so the
workers finish together."""

from __future__ import annotations

import statistics
from collections import deque


def take_batch(retry: deque, ahead: deque, timing: "Timing", batch_s: float, most: int,
               threads: int | None = None) -> list:
    """The games of the next task, taken from ``retry`` first, then ``ahead``: games whose
    expected times add up to about ``batch_s`` (the first always; a game nothing is known of
    plays alone), at most ``most``. ``threads`` is given when every game left to submit is
    in sight: the batch is then at most half of an even share of them per worker thread,
    so the last games spread over every worker instead of waiting in one worker's batch."""
    cap = most
    if threads:
        cap = min(cap, -(-(len(retry) + len(ahead)) // (2 * threads)))
    group: list = []
    expected = 0.0
    while len(group) < cap and (retry or ahead):
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
    """What a game is expected to take, from the wall times of the games played so far: the
    median of the latest games of the same bots (pairings differ in speed: random against
    random, planner against planner), else the mean of the latest games of the run (a
    game that started its bots' processes counts, so the guess errs long), else nothing
    until four games have been timed."""

    def __init__(self):
        self.latest: deque = deque(maxlen=64)
        self.by_bots: dict[tuple, deque] = {}

    def add(self, task, wall: float) -> None:
        self.latest.append(wall)
        self.by_bots.setdefault(_bots(task), deque(maxlen=9)).append(wall)

    def guess(self, task) -> float | None:
        own = self.by_bots.get(_bots(task))
        if own is not None and len(own) >= 3:
            return max(statistics.median(own), 1e-3)
        if len(self.latest) >= 4:
            return max(statistics.fmean(self.latest), 1e-3)
        return None


def _bots(task) -> tuple:
    """Whom a task's game seats (tasks of other schedules may not say: timed as one kind)."""
    return tuple(getattr(task, "bots", None) or ())
