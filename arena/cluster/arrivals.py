"""Finished tasks as they arrive on the coordinator, read and landed off its main thread.

The coordinator's main thread stores every game (one SQLite transaction each) and submits
the next tasks; reading a task's records and writing their files (a replay and a log per
seat, each a file created on the coordinator's disk: 0.5-0.8 ms of CPU apiece on a small
virtual machine) is as much work again. :class:`Arrivals` does that reading and writing on
a thread of its own, so the two overlap (both spend their time in system calls and SQLite,
outside the GIL) and one main thread keeps up with more workers. A task's games are handed
to the main thread only once their files are written: a stored game's files exist, as on
a local run.
"""

from __future__ import annotations

import pickle
import queue
import threading
from typing import Callable

from ..execution.work import describe
from .landing import Landing


class Arrivals:
    """Takes each finished task from ``pending`` (a :class:`distributed.as_completed` with
    results) on a thread of its own, reads its ``(results, late)`` (see
    :func:`arena.cluster.worker.play_batch`), lands the files of its games (``requests_of(key)``:
    their requests, in order) and of the bots' late lines, and hands the main thread
    ``(future, results, None)`` -- each game's result as :func:`play_batch` gave it, or
    ``("failed", why)`` when its files could not be written -- or ``(future, None, exception)``
    when the task itself failed (cancelled, its workers killed, ...)."""

    def __init__(self, pending, landing: Landing, requests_of: Callable[[str], list],
                 log_mb: Callable[[list], int]):
        self.pending, self.landing, self.requests_of, self.log_mb = pending, landing, requests_of, log_mb
        self.waiting = threading.Semaphore(0)  # one per future added and not taken yet
        self.done: queue.Queue = queue.Queue()
        self.closing = False
        self.thread = threading.Thread(target=self._run, name="arena-arrivals", daemon=True)
        self.thread.start()

    def add(self, future) -> None:
        """Follow ``future``, a task just submitted."""
        self.pending.add(future)
        self.waiting.release()

    def next(self) -> tuple:
        """The next task read and landed (waits for one); raises what stopped the thread."""
        item = self.done.get()
        if item[0] is None:
            raise item[2]
        return item

    def close(self) -> None:
        """Stop reading (tasks still in flight are dropped: the run ended or was stopped)."""
        self.closing = True
        self.waiting.release()
        self.thread.join(timeout=5)

    def _run(self) -> None:
        try:
            while True:
                self.waiting.acquire()
                if self.closing:
                    return
                # there is a future not taken yet, so this waits for it and never runs dry
                fut, value = next(self.pending)
                if self.closing:
                    return
                self.done.put(self._read(fut, value))
        except BaseException as exc:  # the main thread raises it
            self.done.put((None, None, exc))

    def _read(self, fut, value) -> tuple:
        try:
            results, late = pickle.loads(_unwrap(fut, value))
        except Exception as exc:
            return fut, None, exc
        requests = self.requests_of(fut.key)
        landed = []
        for request, (kind, item) in zip(requests, results):
            if kind == "ok":
                try:
                    item["outcome"] = self.landing.land(request, item["outcome"])
                except Exception as exc:
                    kind, item = "failed", describe(exc)
            landed.append((kind, item))
        if late:  # what bots wrote after game_over, since their games were sent
            self.landing.append(late, self.log_mb(requests))
        return fut, landed, None


def _unwrap(fut, value):
    """A finished future's result, or raise its exception (``as_completed`` with results)."""
    if fut.status == "error":
        raise value[1]
    if isinstance(value, BaseException):  # cancelled
        raise value
    return value
