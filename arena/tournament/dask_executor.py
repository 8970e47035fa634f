"""The cluster executor: every game is a task on a Dask distributed cluster.

The coordinator (``arena run``) connects a :class:`distributed.Client` to the scheduler,
submits games lazily (two per worker thread in flight) and stores results as they come
back -- the database stays on the coordinator's machine. Dask itself re-runs a task whose
worker died; the coordinator follows the scheduler's ``remove-worker`` events and reports
every unexpected worker death with the games it was playing. A task that killed
``distributed.scheduler.allowed-failures`` workers comes back as ``KilledWorker``: it is
rescheduled by the coordinator, at most ``MAX_ATTEMPTS`` times. Workers need the project
installed (``pip install '.[cluster]'``).
"""

from __future__ import annotations

from collections import deque
from typing import Callable, Iterator

from ..errors import ArenaError, UsageError
from .executors import GameFailed, _describe, count_loss, execute
from .schedule import WAIT


class DaskExecutor:
    """Games as tasks on the Dask scheduler at ``address`` (or on a given ``Client``)."""

    def __init__(self, address=None, client=None):
        self.address = address
        self.client = client
        self._own = client is None

    def _connect(self):
        try:
            from distributed import Client
        except ImportError:
            raise UsageError("the dask executor needs dask[distributed]: pip install 'project-l-arena[cluster]'") from None
        try:
            return Client(self.address, timeout="10s", set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise UsageError(f"cannot reach the dask scheduler at {self.address} ({_describe(exc)}); "
                             "start one with `dask scheduler` (see docs/tournaments.md)") from None

    def run(self, tasks: Iterator, payload: Callable, stop: Callable[[], bool],
            on_death: Callable[[list, str], None]) -> Iterator[tuple]:
        """Play ``tasks`` on the cluster; yield ``(task, reply or exception)`` as games finish."""
        from distributed import as_completed
        from distributed.scheduler import KilledWorker

        client = self.client or self._connect()
        self.client = client
        threads = sum(client.nthreads().values()) or 1
        limit = 2 * threads
        tasks = iter(tasks)
        retry: deque = deque()
        attempts: dict[str, int] = {}
        inflight: dict = {}
        pending = as_completed([], loop=client.loop)  # the client is not the default one
        deaths: deque = deque()  # appended on the client's event-loop thread, read here
        games_of: dict[str, str] = {}  # every submitted future's key -> its game's key

        def on_event(event) -> None:
            msg = event[1] if isinstance(event, tuple) and len(event) == 2 else event
            if isinstance(msg, dict) and msg.get("action") == "remove-worker" and not msg.get("expected"):
                deaths.append((msg.get("worker", "?"), set(msg.get("processing-tasks") or ())))

        def report_deaths() -> None:
            while deaths:
                worker, keys = deaths.popleft()
                games = sorted(games_of[k] for k in keys if k in games_of)
                if games:
                    on_death(games, f"dask worker {worker} died during {len(games)} game(s); dask runs them again")

        def fill():
            while len(inflight) < limit and not stop():
                task = retry.popleft() if retry else next(tasks, None)
                if task is None or task is WAIT:  # WAIT: the next games need results still in flight
                    return
                fut = client.submit(execute, payload(task), key=f"game-{task.key}-{attempts.get(task.key, 0)}",
                                    pure=False)
                inflight[fut.key] = (fut, task)
                games_of[fut.key] = task.key
                pending.add(fut)

        try:
            try:
                client.subscribe_topic("all", on_event)
                followed = True
            except Exception:  # an older scheduler: deaths are only heard of through KilledWorker
                followed = False
            fill()
            while inflight:
                fut = next(pending)
                report_deaths()
                _, task = inflight.pop(fut.key)
                try:
                    yield task, fut.result()
                except KilledWorker as exc:
                    given_up = count_loss(task, attempts)
                    if given_up is not None:
                        yield task, given_up
                    else:
                        retry.append(task)
                    if not followed:  # otherwise each death was reported from its event
                        on_death([task.key], f"dask workers died running the game ({_describe(exc)}); rescheduled")
                except ArenaError as exc:
                    yield task, exc
                except Exception as exc:
                    yield task, GameFailed(_describe(exc))
                fut.release()
                if not stop():
                    fill()
                else:
                    for other, _t in inflight.values():
                        other.cancel()
                    inflight.clear()
            report_deaths()  # an event that came after its game's result
        finally:
            try:
                client.unsubscribe_topic("all")
            except Exception:  # the connection may be gone already
                pass
            if self._own:
                client.close()
                self.client = None

    def shutdown(self) -> None:
        """Close the connection if this executor opened it."""
        if self._own and self.client is not None:
            self.client.close()
            self.client = None
